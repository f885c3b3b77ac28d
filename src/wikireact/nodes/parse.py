"""`parse`: turn the model's text into an action, and decide what kind of step it is.

The step is `invalid` (format error), `finish`, `repeat` (the same action in the same
environment state as an earlier step, see `wikireact.progress`), or left for `act`
to execute (kind None). Never raises.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from wikireact.context import Context
from wikireact.progress import earlier_step, state_key
from wikireact.protocol import Action, parse_output
from wikireact.resources import settings
from wikireact.state import ActionDict, CurrentStep, State, StepKind


def parse(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Parse the model's text into the current step's thought and action, and classify it."""
    context = settings(runtime)
    parsed = parse_output((state.get("current") or {}).get("raw", ""), require_thought=False)
    thought = parsed.thought if context.method == "react" else ""
    if not isinstance(parsed.result, Action):
        return {"current": CurrentStep(
            thought=thought,
            action=None,
            action_text=parsed.result.action_text,
            format_error=parsed.result.message,
            kind="invalid",
            state_key=None,
            repeat_of=None,
        )}
    action = ActionDict(name=parsed.result.name, argument=parsed.result.argument)
    key = state_key(action, state)
    repeat_of = earlier_step(key, state.get("proposals") or {})
    kind: StepKind | None = "finish" if action["name"] == "Finish" else ("repeat" if repeat_of is not None else None)
    return {"current": CurrentStep(
        thought=thought,
        action=action,
        action_text=str(parsed.result),
        format_error=None,
        kind=kind,
        state_key=key,
        repeat_of=repeat_of,
    )}
