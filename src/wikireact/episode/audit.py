"""The audit trail: per step, the facts (action as data, result, times, cost, authorisation).

A Thought is the model's account of itself, not evidence; an audit keeps beside it which
action ran with which arguments, what came back, when (UTC), how many Wikipedia
requests and model tokens it cost, and who approved, edited or rejected it. `observe`
appends one `AuditRecord` per step from what the nodes wrote; only `act` records times,
and its writes are saved together, so a resumed thread's records equal an
uninterrupted run's (times aside).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from wikireact.state import (
    ActionDict,
    AuditRecord,
    CurrentStep,
    ProtocolName,
    StepKind,
    StructuredAction,
)

ARGUMENT_NAMES = {"Search": "title", "Lookup": "keyword", "Finish": "answer"}


def utc_now() -> str:
    """Return the current UTC time as ISO 8601 with milliseconds (e.g. 2026-11-30T11:07:13.123Z)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def structured_action(action: ActionDict | None) -> StructuredAction | None:
    """Return an action as its verb and named arguments (None for no action)."""
    if action is None:
        return None
    return StructuredAction(
        verb=action["name"], arguments={ARGUMENT_NAMES[action["name"]]: action["argument"]}
    )


def audit_record(
    number: int, kind: StepKind, current: CurrentStep, observation: str, protocol: ProtocolName
) -> AuditRecord:
    """Return the audit record of step `number` from the step in progress."""
    return AuditRecord(
        step=number,
        kind=kind,
        protocol=protocol,
        thought=current.get("thought", ""),
        action=structured_action(current.get("action")),
        attempted=current.get("action_text", ""),
        observation=observation,
        started_at=current.get("started_at"),
        ended_at=current.get("ended_at"),
        wiki_requests=current.get("wiki_requests", 0),
        input_tokens=current.get("input_tokens", 0),
        output_tokens=current.get("output_tokens", 0),
        approval=current.get("approval"),
        model_seconds=current.get("model_seconds", 0.0),
        wiki_seconds=seconds_between(current.get("started_at"), current.get("ended_at")),
        cleared=current.get("cleared", 0),
    )


def seconds_between(started_at: str | None, ended_at: str | None) -> float:
    """Return the seconds between two `utc_now` times (0.0 when either is missing)."""
    if not started_at or not ended_at:
        return 0.0
    start, end = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (started_at, ended_at))
    return round((end - start).total_seconds(), 3)


def signed(decision: Any, reviewer: str | None) -> Any:
    """Return a resume value carrying the reviewer's identity (`"by"`), unless it has one."""
    if not reviewer:
        return decision
    if isinstance(decision, dict):
        return decision if decision.get("by") else {**decision, "by": reviewer}
    if decision is True or decision is None:
        return {"approve": True, "by": reviewer}
    if decision is False:
        return {"approve": False, "by": reviewer}
    return decision


def timed_trajectory(
    trajectory: Sequence[Mapping[str, Any]], audit: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Return the steps with the wall time of each one's model and Wikipedia call.

    The times are read from the steps' audit records (one per step, in order), not stored in
    the steps twice (a record without `wiki_seconds` gives it from its start and end times);
    steps without a matching record are returned as they are.
    """
    if len(audit) != len(trajectory):
        return [dict(step) for step in trajectory]
    return [
        {
            **step,
            "model_seconds": record.get("model_seconds", 0.0),
            "wiki_seconds": record.get(
                "wiki_seconds", seconds_between(record.get("started_at"), record.get("ended_at"))
            ),
        }
        for step, record in zip(trajectory, audit, strict=True)
    ]


def history_json(
    thread_id: str, question: str, settings: dict[str, Any], values: dict[str, Any]
) -> str:
    """Return a thread's audit trail as one JSON object (`wikireact history THREAD --json`)."""
    return json.dumps(
        {
            "thread_id": thread_id,
            "question": question,
            "protocol": settings.get("protocol", "text"),
            "settings": settings,
            "status": values.get("status", "running"),
            "answer": values.get("answer"),
            "citations": values.get("citations", []),
            "supported": values.get("supported"),
            "steps": values.get("audit", []),
        },
        ensure_ascii=False,
    )
