"""Which prompt a chat model gets: the default few-shot prompt, or the small-model variant.

A model chooses by carrying a `prompt_variant` attribute (the local Gemma 3 270M says
`small`); every other model gets `default`, the prompt of `wikireact.prompts`, so runs on
Groq and other providers stay comparable. Both variants speak the same text protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from wikireact.exemplars import EpisodeExemplar
from wikireact.models import is_local
from wikireact.prompts import build_messages as default_messages
from wikireact.small_model_prompt import build_messages as small_model_messages
from wikireact.state import Step

PromptBuilder = Callable[
    [str, Sequence[Step], Literal["react", "act"], "tuple[EpisodeExemplar, ...] | None"],
    list[BaseMessage],
]
PROMPT_VARIANTS: dict[str, PromptBuilder] = {
    "default": default_messages,
    "small": small_model_messages,
}


def prompt_variant(model: BaseChatModel) -> str:
    """Return the name of the prompt variant `model` asks for (`default` unless it names one)."""
    variant = getattr(model, "prompt_variant", None)
    return variant if isinstance(variant, str) and variant in PROMPT_VARIANTS else "default"


def variant_for(spec: str, model: BaseChatModel | None = None) -> str:
    """Return the variant a run gets: `model`'s, or, before it is loaded, the one `spec` names."""
    if model is not None:
        return prompt_variant(model)
    if is_local(spec):
        from wikireact.local_model import LOCAL_PROMPT_VARIANT

        return LOCAL_PROMPT_VARIANT
    return "default"


def build_prompt(
    model: BaseChatModel,
    question: str,
    history: Sequence[Step],
    method: Literal["react", "act"],
    exemplars: tuple[EpisodeExemplar, ...] | None = None,
) -> list[BaseMessage]:
    """Return the text-protocol messages for the next step in the variant `model` asks for.

    `exemplars` (from a prompt file) replace the variant's own few-shot episodes.
    """
    return PROMPT_VARIANTS[prompt_variant(model)](question, history, method, exemplars)
