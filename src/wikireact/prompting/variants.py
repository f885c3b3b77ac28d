"""The prompt variants of the text protocol: the default few-shot prompt and the small-model one.

Which variant a model gets is decided by `wikireact.models.variants`; this module builds
the messages of the variant it names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from langchain_core.messages import BaseMessage

from wikireact.context import Task
from wikireact.prompting.exemplars import EpisodeExemplar, default_episodes
from wikireact.prompting.react import build_messages as default_messages
from wikireact.prompting.small_model import TASK_EXEMPLARS as SMALL_MODEL_EXEMPLARS
from wikireact.prompting.small_model import build_messages as small_model_messages
from wikireact.state import Step

PromptBuilder = Callable[
    [
        str,
        Sequence[Step],
        Literal["react", "act"],
        "tuple[EpisodeExemplar, ...] | None",
        Task,
        "Sequence[str] | None",
    ],
    list[BaseMessage],
]
PROMPT_VARIANTS: dict[str, PromptBuilder] = {
    "default": default_messages,
    "small": small_model_messages,
}
"""Each variant's name and the function that builds its messages."""


def build_prompt(
    variant: str,
    question: str,
    history: Sequence[Step],
    method: Literal["react", "act"],
    exemplars: tuple[EpisodeExemplar, ...] | None = None,
    task: Task = "hotpotqa",
    lessons: Sequence[str] | None = None,
) -> list[BaseMessage]:
    """Return the text-protocol messages for the next step in `variant` (`default`, `small`).

    `exemplars` (from a prompt file) replace the variant's own few-shot episodes for `task`;
    `lessons` of earlier attempts come right before the question.
    """
    return PROMPT_VARIANTS[variant](question, history, method, exemplars, task, lessons)


def variant_exemplars(
    variant: str,
    method: Literal["react", "act"],
    task: Task,
    exemplars: tuple[EpisodeExemplar, ...] | None,
) -> tuple[EpisodeExemplar, ...]:
    """Return the few-shot episodes `variant`'s prompt shows (the tools protocol's: `default`).

    Given to the builder as they are, a prefix of them shows fewer (`wikireact.prompting.fitting`).
    """
    own = default_episodes(method, task)
    if variant == "small" and (exemplars is None or exemplars == own):
        return SMALL_MODEL_EXEMPLARS[task]
    return own if exemplars is None else exemplars
