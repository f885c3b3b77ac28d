"""Reflexion's reflection and self-check prompts, fitted to the model's context window.

Both show a whole trial. When the prompt does not fit, the trial's oldest observations
become one-line placeholders first, keeping the latest `Context.keep_observations` whole,
then the oldest steps are left out whole (`wikireact.prompting.fitting`), as ReAct's
prompt is fitted; the question and the trial's last step are always sent. A prompt that
still does not fit raises `ContextExhaustedError`. The trial in the state stays whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from wikireact.context import Context
from wikireact.nodes.window import fit_to_window
from wikireact.prompting.fitting import Plan, clearable_steps, fitted_history
from wikireact.state import Step

AttemptPrompt = Callable[[str, Sequence[Step], str, Literal["react", "act"]], list[BaseMessage]]
"""`prompts.reflection_messages` or `prompts.check_messages`: question, steps, last line, method."""


def fitted_attempt_messages(
    prompt: AttemptPrompt,
    question: str,
    steps: Sequence[Step],
    last: str,
    context: Context,
    model: BaseChatModel,
) -> list[BaseMessage]:
    """Return `prompt`'s messages for the trial `steps`, fitted to `model`'s window."""

    def build(plan: Plan) -> list[BaseMessage]:
        return prompt(question, fitted_history(steps, plan), last, context.method)

    items = len(clearable_steps(steps))
    return fit_to_window(build, model, context, items=items, steps=len(steps)).messages
