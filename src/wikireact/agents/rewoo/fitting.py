"""ReWOO's planner and LLM-step prompts, fitted to the model's context window.

The planner's prompt grows with nothing but its example plans: when it does not fit, the
examples are left out from the last (one is always shown). An LLM step's input holds the
evidence it cites, fenced: when it does not fit, the earliest cited evidence becomes a
one-line placeholder first, the latest kept (`wikireact.prompting.fitting`). The solver
fits its own (`solver`). A prompt that still does not fit raises `ContextExhaustedError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from wikireact.agents.rewoo.prompts import llm_messages, own_plans, planner_messages
from wikireact.context import Context
from wikireact.models.variants import prompt_variant
from wikireact.nodes.window import fit_to_window
from wikireact.prompting.exemplars import PlanExemplar
from wikireact.prompting.fitting import Plan
from wikireact.prompting.quoting import CLOSE_QUOTE, OPEN_QUOTE
from wikireact.wiki.sentences import split_sentences

_FENCED = re.compile(f"{OPEN_QUOTE}[^{OPEN_QUOTE}{CLOSE_QUOTE}]*{CLOSE_QUOTE}")
"""Cited evidence inside an LLM step's input (`prompts.fenced`)."""


def fitted_planner_messages(
    question: str,
    error: str | None,
    examples: Sequence[PlanExemplar] | None,
    context: Context,
    model: BaseChatModel,
) -> list[BaseMessage]:
    """Return the planner's prompt with as many example plans (from the first) as fit."""
    variant = prompt_variant(model)
    shown = tuple(examples or own_plans(context.task, variant))

    def build(plan: Plan) -> list[BaseMessage]:
        kept = shown[: len(shown) - plan.trimmed]
        return planner_messages(question, context.max_steps, error, kept, context.task, variant)

    return fit_to_window(build, model, context, extras=max(len(shown) - 1, 0)).messages


def fitted_llm_messages(
    question: str, instruction: str, context: Context, model: BaseChatModel
) -> list[BaseMessage]:
    """Return an LLM step's prompt, its earliest cited evidence cleared if it would not fit."""

    def build(plan: Plan) -> list[BaseMessage]:
        shown = (
            _FENCED.sub(_cleared, instruction, count=plan.cleared) if plan.cleared else instruction
        )
        return llm_messages(question, shown, context.task)

    cited = len(_FENCED.findall(instruction))
    return fit_to_window(build, model, context, items=cited).messages


def _cleared(match: re.Match[str]) -> str:
    count = len(split_sentences(match.group()[1:-1])) or 1
    return f"[cleared to fit the context: cited evidence, {count} sentence{'s' * (count != 1)}]"
