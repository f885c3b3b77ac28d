"""`solve`: one model call over the question, the plan and the evidence; it ends with `Finish[answer]`.

The reply is read by ReAct's tolerant parser (`wikireact.protocols.text.parse_output`):
a `Finish[answer]` ends the episode `finished`; anything else is recorded as an `invalid`
step and the episode ends `no_answer` (the solver has one call, as in the paper). Under
`task="fever"` the answer is a verdict: a Finish naming one of the three labels (in any
form `wikireact.protocols.labels` reads) ends it with that label, any other Finish is an
`invalid` step, as in ReAct. The evidence is shown fenced (`prompts.fenced`).
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime

from wikireact.agents.rewoo.prompts import fenced, solver_form, solver_messages
from wikireact.agents.rewoo.records import Recorder
from wikireact.agents.rewoo.state import PlannedStep, RewooState
from wikireact.context import Context, validate_question
from wikireact.episode.resources import DEFAULT_RESOURCES, Resources
from wikireact.episode.stored_context import settle
from wikireact.errors import ContextExhaustedError
from wikireact.evidence import answer_evidence
from wikireact.nodes.model_call import call_model, reply_text, reply_tokens
from wikireact.nodes.window import exhausted, fit_to_window
from wikireact.prompting.fitting import Plan, cleared_observation
from wikireact.protocols.labels import as_verdict
from wikireact.protocols.text import Action, FormatError, cut_at_observation, parse_output
from wikireact.state import ActionDict, Step

NOT_FINISH = "the solver must end with Finish[answer]."


def worked_plan(plan: list[PlannedStep], evidence: dict[str, str]) -> str:
    """Return the plan with each step's evidence (fenced), as the solver reads it."""
    lines = []
    for step in plan:
        name = f"#E{step['number']}"
        if step["thought"]:
            lines.append(f"Plan: {step['thought']}")
        lines.append(f"{name} = {step['tool']}[{step['text']}]")
        lines.append(f"Evidence: {fenced(evidence[name]) if name in evidence else '(none)'}")
    return "\n".join(lines)


def _fitted_messages(
    state: RewooState, context: Context, model: BaseChatModel
) -> list[BaseMessage]:
    """Return the solver's prompt, the oldest evidence cleared if it would not fit the window.

    Raises `ContextExhaustedError` (the episode ends `context_exhausted`) when even the latest
    evidence alone does not fit (`wikireact.prompting.fitting`).
    """
    question = validate_question(state.get("question"))
    plan, evidence = state.get("plan") or [], state.get("evidence") or {}
    named = [(f"#E{s['number']}", f"{s['tool']}[{s['text']}]") for s in plan]
    held = [(name, action) for name, action in named if evidence.get(name)]

    def build(fit: Plan) -> list[BaseMessage]:
        shown = dict(evidence)
        for name, action in held[: fit.cleared]:
            step = Step(
                kind="executed", thought="", action=action, observation=evidence[name], raw=""
            )
            shown[name] = cleared_observation(step)
        return solver_messages(question, worked_plan(plan, shown), context.task)

    return fit_to_window(build, model, context, items=len(held)).messages


def solve(
    state: RewooState, runtime: Runtime[Context], resources: Resources = DEFAULT_RESOURCES
) -> dict[str, Any]:
    """Ask the model for the answer from the plan and its evidence; record it as the last step."""
    context = settle(state.get("context"), runtime.context)
    model = resources.chat_model(context)
    try:  # a prompt that cannot fit ends the episode context_exhausted; a larger window solves
        messages = _fitted_messages(state, context, model)
        started = time.monotonic()
        reply = call_model(
            model,
            messages,
            index=state.get("model_calls", 0),
            failure="the model did not answer from the evidence",
            reply_form=solver_form(context.task),
        )
    except ContextExhaustedError as exc:
        return exhausted(exc)
    seconds = round(time.monotonic() - started, 3)
    text = cut_at_observation(reply_text(reply))
    input_tokens, output_tokens = reply_tokens(reply)
    parsed = parse_output(text)
    result = as_verdict(parsed.result) if context.task == "fever" else parsed.result
    recorder = Recorder(state.get("steps", 0))
    if isinstance(result, Action) and result.name == "Finish":
        recorder.add(
            "finish",
            thought=parsed.thought,
            action_text=str(result),
            observation="",
            raw=text,
            action=ActionDict(name="Finish", argument=result.argument),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model_seconds=seconds,
        )
        answer: str | None = result.argument
        status = "finished"
    else:
        message = result.message if isinstance(result, FormatError) else NOT_FINISH
        attempted = result.action_text if isinstance(result, FormatError) else str(result)
        recorder.add(
            "invalid",
            thought=parsed.thought,
            action_text=attempted,
            observation=f"Invalid answer: {message}",
            raw=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model_seconds=seconds,
        )
        answer, status = None, "no_answer"
    recorder.emit(runtime, status)
    trajectory = [*(state.get("trajectory") or []), *recorder.trajectory]
    return {
        **recorder.update(),
        **answer_evidence(trajectory, answer, question=validate_question(state.get("question"))),
        "answer": answer,
        "status": status,
        "model_calls": 1,
    }
