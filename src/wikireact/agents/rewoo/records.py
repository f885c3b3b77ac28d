"""Recording ReWOO's steps as ReAct records them: a `Step`, its usage and its audit record.

Each node that completes steps (planner, scheduler, solver) collects them in a `Recorder`,
writes them in one update and streams each as the `custom` event and callback event
ReAct's `observe` sends (`wikireact.nodes.observe.STEP_EVENT`), so the CLI's live view,
`astream_events` and Studio show ReWOO's steps as they show ReAct's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import dispatch_custom_event
from langgraph.runtime import Runtime

from wikireact.context import Context
from wikireact.episode.audit import audit_record
from wikireact.nodes.observe import STEP_EVENT
from wikireact.protocols.citations import ShownSentence
from wikireact.state import (
    ActionDict,
    Approval,
    AuditRecord,
    CurrentStep,
    ProtocolName,
    Step,
    StepKind,
    StepUsage,
)

PROTOCOL: ProtocolName = "text"
"""ReWOO's plan, LLM steps and answer are text under both protocols (see the package docstring)."""


@dataclass
class Recorder:
    """The steps one node completes, numbered after the `steps` already recorded."""

    steps: int
    trajectory: list[Step] = field(default_factory=list)
    usage: list[StepUsage] = field(default_factory=list)
    audit: list[AuditRecord] = field(default_factory=list)

    def add(
        self,
        kind: StepKind,
        *,
        thought: str,
        action_text: str,
        observation: str,
        raw: str,
        action: ActionDict | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        wiki_requests: int = 0,
        started_at: str | None = None,
        ended_at: str | None = None,
        approval: Approval | None = None,
        shown: list[ShownSentence] | None = None,
        model_seconds: float = 0.0,
    ) -> None:
        """Record one step (its number is the next one); `shown`: the page sentences it showed.

        `started_at`/`ended_at` time the step's Wikipedia call (its `wiki_seconds`);
        `model_seconds` is the wall time of its model call.
        """
        self.steps += 1
        current = CurrentStep(
            thought=thought,
            action=action,
            action_text=action_text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            wiki_requests=wiki_requests,
            started_at=started_at,
            ended_at=ended_at,
            approval=approval,
            model_seconds=model_seconds,
        )
        step = Step(
            kind=kind, thought=thought, action=action_text, observation=observation, raw=raw
        )
        if shown is not None:
            step["shown"] = shown
        self.trajectory.append(step)
        self.usage.append(
            StepUsage(
                step=self.steps,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                wiki_requests=wiki_requests,
            )
        )
        self.audit.append(audit_record(self.steps, kind, current, observation, PROTOCOL))

    def update(self) -> dict[str, Any]:
        """Return the state update that appends the recorded steps."""
        if not self.trajectory:
            return {}
        return {
            "trajectory": self.trajectory,
            "usage": self.usage,
            "audit": self.audit,
            "steps": self.steps,
        }

    def emit(self, runtime: Runtime[Context], status: str) -> None:
        """Stream every recorded step (the `custom` stream and the `STEP_EVENT` callback event)."""
        first = self.steps - len(self.trajectory) + 1
        for number, step in enumerate(self.trajectory, start=first):
            event = {"step": number, **step, "status": status}
            runtime.stream_writer(event)
            dispatch_custom_event(STEP_EVENT, event)
