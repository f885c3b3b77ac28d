"""`plan` and `replan`: the two planning nodes (one model call each, no side effects).

`plan` asks for the numbered sub-goals. `replan`, after each sub-goal, sees the results so
far and answers `Finish[answer]` or the sub-goals that remain; when the budget is spent
(sub-goals or steps) it may only answer, and a list then ends the episode
`budget_exhausted`. A malformed reply is an `invalid` outcome recorded in `plans`; the
node is asked once more with the reason, and a second one in a row ends the episode
`invalid_plan`. Under FEVER (`Context.task`) the replanner's Finish must be one of the three
labels; any other is such a malformed reply. Each call counts in `model_calls` and `usage`
like a step's. Both prompts are fitted to the model's window (`fitting`); one that cannot
fit, or that the model refuses as too long, ends the episode `context_exhausted`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime

from wikireact.agents.plan_execute.fitting import (
    fitted_planner_messages,
    fitted_replanner_messages,
)
from wikireact.agents.plan_execute.prompts import PlanExemplars, variant_plan_exemplars
from wikireact.agents.plan_execute.replies import Reply, read_reply
from wikireact.agents.plan_execute.state import (
    PLANNING_ATTEMPTS,
    CallKind,
    PlanRecord,
    PlanState,
    PlanUsage,
    read_limits,
)
from wikireact.context import Context, Task, validate_question
from wikireact.episode.budgets import exceeded
from wikireact.episode.resources import DEFAULT_RESOURCES, Resources
from wikireact.episode.stored_context import episode_context
from wikireact.errors import ContextExhaustedError
from wikireact.evidence import answer_evidence
from wikireact.models.reply_form import ReplyForm
from wikireact.models.variants import prompt_variant
from wikireact.nodes.model_call import call_model as model_call
from wikireact.nodes.model_call import reply_text, reply_tokens
from wikireact.nodes.window import exhausted, reopened
from wikireact.prompting.react import STOP_SEQUENCES
from wikireact.protocols.labels import LABELS
from wikireact.protocols.text import cut_at_observation


def plan(
    state: PlanState,
    runtime: Runtime[Context],
    resources: Resources = DEFAULT_RESOURCES,
    exemplars: PlanExemplars | None = None,
) -> dict[str, Any]:
    """Ask the model for the numbered sub-goals of the question (`exemplars`: the prompt's)."""
    context, kept = episode_context(state, runtime.context)
    limits = read_limits(state)
    question = validate_question(state.get("question"))
    model = resources.chat_model(context)
    try:  # a prompt that cannot fit ends the episode context_exhausted; a larger window plans
        messages = fitted_planner_messages(
            question,
            limits.max_subgoals,
            state.get("planning_error"),
            exemplars or variant_plan_exemplars(context.task, prompt_variant(model)),
            context,
            model,
        )
        update = _ask(state, model, messages, "plan", limits.max_subgoals, context.task)
    except ContextExhaustedError as exc:
        return {**kept, **exhausted(exc)}
    return {**kept, **reopened(state), **within_budget(update, state, context)}


def replan(
    state: PlanState,
    runtime: Runtime[Context],
    resources: Resources = DEFAULT_RESOURCES,
    exemplars: PlanExemplars | None = None,
) -> dict[str, Any]:
    """Show the model the results so far; read `Finish[answer]` or the sub-goals that remain."""
    context, kept = episode_context(state, runtime.context)
    limits = read_limits(state)
    results = state.get("subgoals") or []
    steps_left = context.max_steps - state.get("steps", 0)
    goals_left = limits.max_subgoals - len(results) if steps_left > 0 else 0
    model = resources.chat_model(context)
    try:  # a prompt that cannot fit ends the episode context_exhausted; a larger window replans
        messages = fitted_replanner_messages(
            validate_question(state.get("question")),
            results,
            state.get("plan") or [],
            goals_left,
            state.get("planning_error"),
            exemplars or variant_plan_exemplars(context.task, prompt_variant(model)),
            context,
            model,
        )
        update = _ask(state, model, messages, "replan", goals_left, context.task)
    except ContextExhaustedError as exc:
        return {**kept, **exhausted(exc)}
    return {**kept, **reopened(state), **within_budget(update, state, context)}


def within_budget(update: dict[str, Any], state: PlanState, context: Context) -> dict[str, Any]:
    """End a running episode `budget_exhausted` once it reaches a budget; else return `update`.

    Calls and tokens count the sub-goals' episodes too (`wikireact.episode.budgets`).
    """
    if update.get("status", "running") != "running":
        return update
    usage = [*(state.get("usage") or []), *update.get("usage", [])]
    spent = exceeded(usage, context, update.get("model_calls", state.get("model_calls", 0)))
    return (
        update if spent is None else {**update, "status": "budget_exhausted", "stop_reason": spent}
    )


def _ask(
    state: PlanState,
    model: BaseChatModel,
    messages: list[BaseMessage],
    call: CallKind,
    goals_left: int,
    task: Task,
) -> dict[str, Any]:
    """Call the model, read its reply, and return the state update (see the module docstring)."""
    calls, steps = state.get("model_calls", 0), state.get("steps", 0)
    text, tokens_in, tokens_out = call_model(
        model, messages, calls, call, reply_form(call, goals_left, task)
    )
    reply = read_reply(text, finish_allowed=call == "replan", task=task)
    update: dict[str, Any] = {
        "model_calls": calls + 1,
        "plans": [_record(call, text, reply, steps)],
        "usage": [
            PlanUsage(
                step=steps,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                wiki_requests=0,
                call=call,
                subgoal=None,
            )
        ],
        "planning_error": reply.error,
    }
    if reply.error is not None:
        invalid = state.get("invalid_replies", 0) + 1
        update["invalid_replies"] = invalid
        update["status"] = "invalid_plan" if invalid >= PLANNING_ATTEMPTS else "running"
        return update
    update["invalid_replies"] = 0
    if reply.finish is not None:
        question = str(state.get("question") or "")
        trajectory = state.get("trajectory") or []
        cited = answer_evidence(trajectory, reply.finish, question=question, thought=text)
        return update | cited | {"status": "finished", "answer": reply.finish, "plan": []}
    if goals_left <= 0:
        unanswered = answer_evidence([], None)
        return update | unanswered | {"status": "budget_exhausted", "plan": list(reply.subgoals)}
    # "running" also reopens an episode that had run out of budget (a run raised it).
    return update | {"status": "running", "plan": list(reply.subgoals[:goals_left])}


def call_model(
    model: BaseChatModel,
    messages: list[BaseMessage],
    index: int,
    call: CallKind,
    form: ReplyForm | None = None,
) -> tuple[str, int, int]:
    """Return the model's reply text and its input and output tokens.

    `index` is the call's index in the episode (run metadata for scripted and cached
    models). An outage raises `ModelCallError` with one line (the thread can be resumed);
    see `wikireact.nodes.model_call`.
    """
    reply = model_call(
        model,
        messages,
        index=index,
        failure=f"the model did not answer the {call} call",
        stop=STOP_SEQUENCES,
        reply_form=form,
    )
    return (cut_at_observation(reply_text(reply)), *reply_tokens(reply))


def reply_form(call: CallKind, goals_left: int, task: Task) -> ReplyForm:
    """Return the form of the planner's (sub-goals) or replanner's reply (them, or a Finish)."""
    labels = LABELS if task == "fever" else ()
    if call == "plan":
        return ReplyForm("subgoals", goals_left)
    return ReplyForm("replan" if goals_left > 0 else "final_answer", goals_left, labels)


def _record(call: CallKind, text: str, reply: Reply, steps: int) -> PlanRecord:
    return PlanRecord(
        call=call,
        raw=text,
        subgoals=list(reply.subgoals),
        finish=reply.finish,
        error=reply.error,
        after_step=steps,
    )
