"""`plan`: one model call that writes the whole plan; an invalid plan is planned once more.

The plan is read by `wikireact.agents.rewoo.plan.read_plan`. A valid plan is recorded as a
step of kind `plan`; an invalid one as an `invalid` step whose observation says what is
wrong, and that reason goes into the next planner prompt. After `MAX_PLANS` invalid plans
the episode ends with status `invalid_plan`. When the node that follows (`schedule`, or
`plan` again) does not fit in the run's recursion limit, the episode stops with status
`recursion_limit` (`limits`); a later run goes on from the recorded plan.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from wikireact.agents.rewoo.budgets import spent
from wikireact.agents.rewoo.fitting import fitted_planner_messages
from wikireact.agents.rewoo.limits import NEXT_NODE, UNLIMITED
from wikireact.agents.rewoo.plan import Plan, read_plan
from wikireact.agents.rewoo.records import Recorder
from wikireact.agents.rewoo.state import PlannedStep, RewooState
from wikireact.context import Context, validate_question
from wikireact.episode.recursion import has_room
from wikireact.episode.resources import DEFAULT_RESOURCES, Resources
from wikireact.episode.stored_context import episode_context
from wikireact.errors import ContextExhaustedError
from wikireact.models.local.known_titles import with_known_titles
from wikireact.models.reply_form import ReplyForm
from wikireact.nodes.model_call import call_model, reply_text, reply_tokens
from wikireact.nodes.window import exhausted, reopened
from wikireact.prompting.exemplars import PlanExemplar
from wikireact.protocols.text import cut_at_observation

MAX_PLANS = 2
"""Plans the planner may write: the first, and one re-plan after an invalid one."""


def plan(
    state: RewooState,
    runtime: Runtime[Context],
    resources: Resources = DEFAULT_RESOURCES,
    examples: tuple[PlanExemplar, ...] | None = None,
) -> dict[str, Any]:
    """Ask the model for the plan (shown `examples`: None, wikireact's own); record it as a step."""
    context, kept = episode_context(state, runtime.context)
    question = validate_question(state.get("question"))
    written = state.get("plans", 0)
    model = resources.chat_model(context)
    try:  # a prompt that cannot fit ends the episode context_exhausted; a larger window replans
        messages = fitted_planner_messages(
            question, state.get("plan_error"), examples, context, model
        )
        started = time.monotonic()
        reply = call_model(  # a local model over a snapshot: Searches name its titles
            with_known_titles(model, context, lambda: resources.wiki_source(context)),
            messages,
            index=state.get("model_calls", 0),
            failure="the model did not write the plan",
            reply_form=ReplyForm("rewoo_plan", context.max_steps),
        )
    except ContextExhaustedError as exc:
        return {**kept, **exhausted(exc)}
    seconds = round(time.monotonic() - started, 3)
    text = cut_at_observation(reply_text(reply))
    input_tokens, output_tokens = reply_tokens(reply)
    read = read_plan(text, context.max_steps)
    recorder = Recorder(state.get("steps", 0))
    update: dict[str, Any] = {"plans": written + 1, "model_calls": 1, "status": "running"}
    update |= reopened(state)
    if isinstance(read, Plan):
        recorder.add(
            "plan",
            thought=read.reasoning,
            action_text="\n".join(s.as_text() for s in read.steps),
            observation="",
            raw=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model_seconds=seconds,
        )
        update |= {
            "plan": [
                PlannedStep(
                    number=s.number,
                    tool=s.tool,
                    text=s.text,
                    thought=s.thought,
                    needs=list(s.needs),
                    page_of=s.page_of,
                )
                for s in read.steps
            ],
            "plan_error": None,
        }
    else:
        recorder.add(
            "invalid",
            thought="",
            action_text=read.line[:200],
            observation=f"Invalid plan: {read.message}",
            raw=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model_seconds=seconds,
        )
        update |= {"plan": [], "plan_error": read.message}
        if written + 1 >= MAX_PLANS:
            update["status"] = "invalid_plan"
    reason = (
        spent(state, context, recorder.usage, calls=1) if update["status"] == "running" else None
    )
    if reason is not None:  # a budget is reached: a run that raises it goes on from the plan
        update |= {"status": "budget_exhausted", "stop_reason": reason}
    if update["status"] == "running" and not has_room(
        state.get("remaining_steps", UNLIMITED), NEXT_NODE
    ):
        update["status"] = "recursion_limit"
    status = update["status"]
    recorder.emit(runtime, status)
    return {**kept, **update, **recorder.update()}
