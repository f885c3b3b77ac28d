"""How many prompt tokens a model takes, and how to count a prompt's tokens for it.

A model's window is, in this order: `Context.context_tokens` when given (`--context-tokens
N`); the model's own (`context_window` on wikireact's models: a local model's `n_ctx`, read
from its GGUF header and capped at `CONTEXT_TOKENS`; a scripted model's declared one); the
provider table `KNOWN_WINDOWS` by model name; else unknown (no fitting: the provider's own
context-length error still ends the episode `context_exhausted`). The reply's `max_tokens`
is taken off, so a fitted prompt always leaves the reply its room.

Counting uses the model's own tokenizer where it has one (`count_prompt_tokens` on
wikireact's models: llama.cpp's `tokenize` of the prompt exactly as llama.cpp receives it),
then a provider package's own `get_num_tokens_from_messages` (e.g. tiktoken's for OpenAI),
and otherwise LangChain's `count_tokens_approximately` (each message object counted once:
`wikireact.prompting.counting`); the last two are estimates, so `ESTIMATE_MARGIN` is added on
top of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately

from wikireact.prompting.budget import ContextBudget as ContextBudget
from wikireact.prompting.counting import MessageCounts

KNOWN_WINDOWS: dict[str, int] = {
    "qwen/qwen3.6-27b": 131_072,
    "qwen/qwen3-32b": 131_072,
    "openai/gpt-oss-120b": 131_072,
    "openai/gpt-oss-20b": 131_072,
    "llama-3.3-70b-versatile": 131_072,
    "llama-3.1-8b-instant": 131_072,
    "meta-llama/llama-4-scout-17b-16e-instruct": 131_072,
    "meta-llama/llama-4-maverick-17b-128e-instruct": 131_072,
    "moonshotai/kimi-k2-instruct": 131_072,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "claude-sonnet-4-5": 200_000,
    "claude-haiku-4-5": 200_000,
}
"""Context windows (tokens) of provider models by name, from the providers' model pages."""
ESTIMATE_MARGIN = 0.10
"""Share added to a count that is an estimate (not the model's own tokenizer): 10%."""
DEFAULT_REPLY_TOKENS = 512
"""Tokens kept for the reply when the model states no `max_tokens`."""
APPROXIMATE_TOKENS = MessageCounts(lambda message: count_tokens_approximately([message]))
"""LangChain's `count_tokens_approximately`, each message object counted once (it rounds each
message's count up on its own, so a prompt's count is the sum of its messages')."""


def context_budget(
    model: BaseChatModel, spec: str, context_tokens: int = 0
) -> ContextBudget | None:
    """Return the budget of `model` (run as `spec`); None when its window is unknown.

    `context_tokens` (> 0) overrides the window the model or the table states.
    """
    inner = real_model(model)
    window = context_tokens or _own_window(inner) or _known_window(spec)
    if not window:
        return None
    reply = _reply_tokens(inner)
    return ContextBudget(window=window, reply=min(reply, window // 2), count=_counter(inner))


def real_model(model: Any) -> Any:
    """Return the model behind a wrapper that names it `model` (a `RunnableBinding`), else itself."""
    bound = getattr(model, "bound", None)
    return bound if isinstance(bound, BaseChatModel) else model


def _own_window(model: Any) -> int | None:
    window = getattr(model, "context_window", None)
    return int(window) if isinstance(window, int) and window > 0 else None


def _known_window(spec: str) -> int | None:
    name = spec.strip().partition(":")[2] or spec.strip()
    return KNOWN_WINDOWS.get(name)


def _reply_tokens(model: Any) -> int:
    for name in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = getattr(model, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return DEFAULT_REPLY_TOKENS


def _counter(model: Any) -> Callable[[Sequence[BaseMessage]], int]:
    own = getattr(model, "count_prompt_tokens", None)
    if callable(own):
        return lambda messages: int(own(list(messages)))
    return lambda messages: estimate_tokens(model, messages)


def estimate_tokens(model: Any, messages: Sequence[BaseMessage]) -> int:
    """Return a provider prompt's tokens (estimated), plus `ESTIMATE_MARGIN`.

    The provider package's own count if it has one, else LangChain's approximation.
    """
    count: int | None = None
    if isinstance(model, BaseChatModel) and (
        type(model).get_num_tokens_from_messages is not BaseChatModel.get_num_tokens_from_messages
    ):
        try:
            count = model.get_num_tokens_from_messages(list(messages))
        except Exception:  # e.g. a tokenizer that must be downloaded: estimate instead
            count = None
    if count is None:
        count = APPROXIMATE_TOKENS(messages)
    return math.ceil(count * (1 + ESTIMATE_MARGIN))
