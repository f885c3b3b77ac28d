"""`parse`: turn the model's text into an action or a format error (never raises)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from wikireact.context import Context
from wikireact.protocol import Action, parse_output
from wikireact.resources import settings
from wikireact.state import CurrentStep, State


def parse(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Parse the model's text into the current step's `thought` and `action`, or `format_error`."""
    context = settings(runtime)
    parsed = parse_output((state.get("current") or {}).get("raw", ""), require_thought=False)
    thought = parsed.thought if context.method == "react" else ""
    if isinstance(parsed.result, Action):
        action = parsed.result
        return {"current": CurrentStep(
            thought=thought,
            action={"name": action.name, "argument": action.argument},
            action_text=str(action),
            format_error=None,
        )}
    return {"current": CurrentStep(
        thought=thought,
        action=None,
        action_text=parsed.result.action_text,
        format_error=parsed.result.message,
    )}
