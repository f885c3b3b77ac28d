"""Evaluating a child: the value function for a step that goes on, the reward for an ended one.

A terminal child (its episode ended: Finish, the step budget, a repetition halt) is judged
by Reflexion's evaluator (`wikireact.agents.reflexion.evaluator`): with a gold answer,
exact match after SQuAD normalisation (evaluation); without one, a Finish is accepted,
unless the optional self-check call says otherwise. Its value is its reward: 1 when the
verdict passed, else 0. Any other child gets the value prompt's score / 10 (`values.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from wikireact.agents.lats.backprop import blank_stats
from wikireact.agents.lats.prompts import VALUE_FORM, value_messages
from wikireact.agents.lats.settings import SearchSettings
from wikireact.agents.lats.state import NodeStats, TreeNode
from wikireact.agents.lats.values import read_value
from wikireact.agents.reflexion.evaluator import (
    judge_against_gold,
    judge_without_gold,
    read_check,
)
from wikireact.agents.reflexion.fitting import fitted_attempt_messages
from wikireact.agents.reflexion.prompts import check_messages
from wikireact.agents.reflexion.state import PASSED, Trial
from wikireact.context import Context
from wikireact.nodes.model_call import call_model, reply_text, reply_tokens
from wikireact.nodes.window import fit_to_window
from wikireact.prompting.fitting import Plan, clearable_steps, fitted_history
from wikireact.state import Step

Tokens = tuple[int, int]


def needs_check(node: TreeNode, settings: SearchSettings) -> bool:
    """Whether judging the terminal `node` takes a self-check call."""
    answer = node["update"].get("answer")
    return settings.gold_answer is None and settings.self_check and answer is not None


def judge_terminal(
    node: TreeNode,
    question: str,
    steps: Sequence[Step],
    settings: SearchSettings,
    context: Context,
    model: BaseChatModel,
    index: int,
) -> tuple[NodeStats, list[Tokens]]:
    """Return the terminal `node`'s record (value = reward) and the tokens of any call made."""
    trial = _as_trial(node)
    calls: list[Tokens] = []
    if settings.gold_answer is not None:
        verdict, judged = judge_against_gold(trial, settings.gold_answer)
    else:
        verdict, judged = judge_without_gold(trial)
        answer = node["update"].get("answer")
        if needs_check(node, settings) and answer is not None:
            messages = fitted_attempt_messages(
                check_messages, question, steps, answer, context, model
            )
            reply = call_model(
                model, messages, index=index, failure="the model did not answer the self-check"
            )
            verdict, judged = read_check(reply_text(reply), answer)
            calls.append(reply_tokens(reply))
    reward = 1.0 if verdict in PASSED else 0.0
    record = blank_stats(reward)
    record["reward"], record["verdict"], record["judged"] = reward, verdict, judged
    record["valued"] = True
    return record, calls


def value_of(
    question: str,
    steps: Sequence[Step],
    reflections: Sequence[str],
    context: Context,
    model: BaseChatModel,
    index: int,
) -> tuple[NodeStats, Tokens]:
    """Ask the value prompt about the branch `steps`; return the node's record and the call's tokens."""
    reply = call_model(
        model,
        _fitted_value_messages(question, steps, reflections, context, model),
        index=index,
        failure="the model did not value a step",
        reply_form=VALUE_FORM,
    )
    value = read_value(reply_text(reply))
    record = blank_stats(value.value)
    record["score"], record["valued"] = value.score, value.valued
    return record, reply_tokens(reply)


def _fitted_value_messages(
    question: str,
    steps: Sequence[Step],
    reflections: Sequence[str],
    context: Context,
    model: BaseChatModel,
) -> list[BaseMessage]:
    """Return the value prompt fitted to the model's window (`wikireact.prompting.fitting`).

    The branch's oldest observations are cleared first, then the oldest reflections left out,
    then the oldest steps.
    """

    def build(plan: Plan) -> list[BaseMessage]:
        shown = fitted_history(steps, plan)
        return value_messages(question, shown, reflections[plan.trimmed :], context)

    items, extras = len(clearable_steps(steps)), len(reflections)
    return fit_to_window(
        build, model, context, items=items, extras=extras, steps=len(steps)
    ).messages


def _as_trial(node: TreeNode) -> Trial:
    """Return what Reflexion's evaluator reads of a trial: the answer and how it ended."""
    return {"answer": node["update"].get("answer"), "status": node["status"]}  # type: ignore[typeddict-item]
