"""`observe`: append the step to the history, count it, apply repetition and budget rules.

It also stops the run (status `recursion_limit`) when LangGraph's `RemainingSteps` says
another full step (`SUPERSTEPS_PER_STEP`) might not fit before the recursion limit
(`wikireact.episode.recursion.has_room`): the run then ends gracefully instead of raising
`GraphRecursionError`, and a run with a larger limit continues the episode. Each step is streamed as a `custom` event and
dispatched as the callback event `STEP_EVENT` (seen by `astream_events`).

It reads the step's `kind` (decided by `parse` and `act`), never infers it from the text,
and appends the step's audit record (`wikireact.episode.audit`) from what the nodes wrote.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

from langchain_core.callbacks import dispatch_custom_event
from langgraph.config import get_config
from langgraph.runtime import Runtime

from wikireact.context import RECURSION_LIMIT, SUPERSTEPS_PER_STEP, Context
from wikireact.episode.audit import audit_record
from wikireact.episode.budgets import exceeded
from wikireact.episode.recursion import has_room
from wikireact.episode.stored_context import episode_context
from wikireact.evidence import answer_evidence
from wikireact.models.call_metadata import CALL_OFFSET_KEY, TOKENS_OFFSET_KEY
from wikireact.protocols.text import VALID_ACTIONS_HINT
from wikireact.state import ENDED, CurrentStep, State, Status, Step, StepKind, StepUsage
from wikireact.wiki.repetition import times_proposed

COUNTED: frozenset[StepKind] = frozenset({"executed", "repeat"})
"""Kinds recorded as proposals of an action in an environment state."""
STEP_EVENT = "wikireact_step"
"""Name of the custom event each completed step dispatches (`astream_events`, callbacks)."""


def observe(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Record the finished step and decide the episode's status.

    The budgets count the calls and tokens an enclosing agent used before this episode too.
    """
    context, kept = episode_context(state, runtime.context)
    number = state.get("steps", 0) + 1
    current = state.get("current") or {}
    kind: StepKind = current.get("kind") or "invalid"
    key = current.get("state_key")
    proposals = state.get("proposals") or {}
    action = current.get("action")
    answer = action["argument"] if kind == "finish" and action is not None else None

    usage = StepUsage(
        step=number,
        input_tokens=current.get("input_tokens", 0),
        output_tokens=current.get("output_tokens", 0),
        wiki_requests=current.get("wiki_requests", 0),
        cleared=current.get("cleared", 0),
    )
    before = state.get("usage") or []
    metadata = get_config().get("metadata") or {}
    earlier = [metadata.get(TOKENS_OFFSET_KEY) or {}]  # an enclosing agent's tokens so far
    offset = int(metadata.get(CALL_OFFSET_KEY, 0))
    spent = exceeded(chain(earlier, before, [usage]), context, offset + len(before) + 1)
    status: Status = "running"
    if answer is not None:
        status = "finished"
    elif kind == "repeat" and times_proposed(key, proposals) + 1 >= context.repetition_limit:
        status = "repetition_halted"
    elif number >= context.max_steps or spent is not None:
        status = "budget_exhausted"
    elif not has_room(state.get("remaining_steps", RECURSION_LIMIT), SUPERSTEPS_PER_STEP):
        status = "recursion_limit"  # the next step might not fit: stop before LangGraph raises

    step = Step(
        kind=kind,
        thought=current.get("thought", ""),
        action=current.get("action_text", ""),
        observation=_observation(kind, current, state),
        raw=current.get("raw", ""),
    )
    if context.protocol == "tools":
        step["calls"] = current.get("calls") or []
    if kind == "executed" and "shown" in current:  # absent: a step begun before it was kept
        step["shown"] = current.get("shown") or []
    event = {"step": number, **step, "status": status}
    runtime.stream_writer(event)
    dispatch_custom_event(STEP_EVENT, event)
    evidence = {}
    if status in ENDED:
        trajectory = [*(state.get("trajectory") or []), step]
        evidence = answer_evidence(trajectory, answer, question=state.get("question") or "")
    return {
        **kept,
        **evidence,
        "trajectory": [step],
        "usage": [usage],
        "audit": [audit_record(number, kind, current, step["observation"], context.protocol)],
        "steps": number,
        "proposals": {key: [number]} if kind in COUNTED and key is not None else {},
        "status": status,
        "answer": answer,
        "stop_reason": spent if status == "budget_exhausted" else None,
    }


def _observation(kind: StepKind, current: CurrentStep, state: State) -> str:
    """Return what the step observed; for steps that ran nothing, say why."""
    if kind == "invalid":
        return f"Invalid action: {current.get('format_error') or VALID_ACTIONS_HINT}"
    if kind == "finish":
        return ""
    if kind != "repeat":
        return current.get("observation", "")
    action, earlier = current.get("action_text", ""), current.get("repeat_of")
    proposed = current.get("action")
    if (
        proposed is not None
        and proposed["name"] == "Search"
        and state.get("page_title") is not None
        and current.get("state_key") == state.get("page_key")
    ):
        return (
            f"The page {state.get('page_title')} is already open (since step {earlier}); its first "
            "sentences are above. Use Lookup[keyword] to read more of it, or Search another title."
        )
    return (
        f"You already did {action} at step {earlier} in the same situation, so its result is the "
        f"Observation of step {earlier} above; it was not run again. Choose a different action."
    )
