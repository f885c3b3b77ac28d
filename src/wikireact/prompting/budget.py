"""A model's prompt budget: its context window, the reply's share, and how it counts tokens.

Built for a model by `wikireact.models.context_window.context_budget`; read by the prompt
fitting (`wikireact.prompting.fitting`), which sits below the models layer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage


@dataclass(frozen=True)
class ContextBudget:
    """The prompt tokens a model takes (`limit`) and how to count a prompt's tokens for it."""

    window: int
    """The model's whole context window, in tokens."""
    reply: int
    """Tokens kept for the reply (the model's `max_tokens`)."""
    count: Callable[[Sequence[BaseMessage]], int]
    """Counts a prompt's tokens (an estimate already includes `ESTIMATE_MARGIN`)."""

    @property
    def limit(self) -> int:
        """The most prompt tokens that leave the reply its `reply` tokens."""
        return self.window - self.reply
