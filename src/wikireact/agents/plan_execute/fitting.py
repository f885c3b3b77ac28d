"""The planner's and replanner's prompts, fitted to the model's context window.

The replanner's prompt grows with the sub-goals' results: when it does not fit, the
oldest results become a one-line placeholder first (what the sub-goal ended with, not its
text), keeping the latest `Context.keep_observations` whole, then the examples are left
out from the last (`wikireact.prompting.fitting`); the question and the latest result are
always sent. The planner's prompt only has examples to leave out. A prompt that still does
not fit raises `ContextExhaustedError`. The state keeps every result whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from wikireact.agents.plan_execute.prompts import (
    PlanExemplars,
    planner_messages,
    replanner_messages,
)
from wikireact.agents.plan_execute.state import SubgoalResult
from wikireact.context import Context
from wikireact.nodes.window import fit_to_window
from wikireact.prompting.fitting import Plan
from wikireact.prompting.tasks import INPUT_LABEL
from wikireact.wiki.sentences import split_sentences


def fitted_planner_messages(
    question: str,
    limit: int,
    error: str | None,
    exemplars: PlanExemplars,
    context: Context,
    model: BaseChatModel,
) -> list[BaseMessage]:
    """Return the planner's prompt with as many examples (from the first) as fit."""
    examples = _examples(exemplars.plan)

    def build(plan: Plan) -> list[BaseMessage]:
        kept = replace(exemplars, plan=_kept(examples, plan.trimmed))
        return planner_messages(question, limit, error, kept, context.task)

    return fit_to_window(build, model, context, extras=len(examples)).messages


def fitted_replanner_messages(
    question: str,
    results: Sequence[SubgoalResult],
    remaining: Sequence[str],
    limit: int,
    error: str | None,
    exemplars: PlanExemplars,
    context: Context,
    model: BaseChatModel,
) -> list[BaseMessage]:
    """Return the replanner's prompt: the oldest results cleared, then examples left out, to fit."""
    examples = _examples(exemplars.replan)

    def build(plan: Plan) -> list[BaseMessage]:
        shown = [cleared_result(r) for r in results[: plan.cleared]] + list(results[plan.cleared :])
        kept = replace(exemplars, replan=_kept(examples, plan.trimmed))
        return replanner_messages(question, shown, remaining, limit, error, kept, context.task)

    return fit_to_window(build, model, context, items=len(results), extras=len(examples)).messages


def cleared_result(result: SubgoalResult) -> SubgoalResult:
    """Return `result` as a placeholder: how the sub-goal ended and how long its result was.

    An answer shorter than its placeholder stays as it is (clearing it would lengthen the prompt).
    """
    if result["answer"] is not None:
        words = len(result["answer"].split())
        what = f"answered in {words} word{'s' * (words != 1)}"
    else:
        count = len(split_sentences(result["last_observation"]))
        what = f"no answer ({result['status']}), last observation of {count} sentences"
    placeholder = f"[cleared to fit the context: {what}]"
    if result["answer"] is not None and len(result["answer"]) <= len(placeholder):
        return result
    return {**result, "answer": placeholder, "last_observation": ""}


def _examples(text: str) -> list[str]:
    """Split a prompt file's examples text at each `Question:`/`Claim:` line (text before it kept)."""
    blocks: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line.startswith(tuple(f"{label}:" for label in INPUT_LABEL.values())) and blocks[-1]:
            blocks.append([])
        blocks[-1].append(line)
    return ["\n".join(block) for block in blocks if any(block)]


def _kept(examples: list[str], trimmed: int) -> str:
    return "\n".join(examples[: max(len(examples) - trimmed, 0)])
