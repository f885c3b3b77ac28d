"""`observe`: append the step to the history, count it, apply repetition and budget rules."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from wikireact.context import Context
from wikireact.protocol import VALID_ACTIONS_HINT
from wikireact.resources import settings
from wikireact.state import State, Status, Step, StepUsage


def observe(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Record the finished step and decide the episode's status."""
    context = settings(runtime)
    number = state.get("steps", 0) + 1
    current = state.get("current") or {}
    action = current.get("action")
    action_text = current.get("action_text", "")
    counts = state.get("action_counts") or {}
    history = state.get("trajectory") or []
    answer: str | None = None
    observation = current.get("observation", "")

    if action is None:
        observation = f"Invalid action: {current.get('format_error') or VALID_ACTIONS_HINT}"
    elif action["name"] == "Finish" and not observation:
        observation, answer = "", action["argument"]
    elif not observation:  # routed around `act` because it was done before
        earlier = next((i for i, s in enumerate(history, 1) if s["action"] == action_text), None)
        observation = (
            f"You already did {action_text} at step {earlier}; its result is above. "
            "Do not repeat it: choose a different action."
        )
    times_proposed = counts.get(action_text, 0) + 1

    status: Status = "running"
    if answer is not None:
        status = "finished"
    elif action is not None and times_proposed >= context.repetition_limit:
        status = "repetition_halted"
    elif number >= context.max_steps:
        status = "budget_exhausted"

    step = Step(
        thought=current.get("thought", ""),
        action=action_text,
        observation=observation,
        raw=current.get("raw", ""),
    )
    usage = StepUsage(
        step=number,
        input_tokens=current.get("input_tokens", 0),
        output_tokens=current.get("output_tokens", 0),
        wiki_requests=current.get("wiki_requests", 0),
    )
    runtime.stream_writer(
        {"step": number, "thought": step["thought"], "action": action_text,
         "observation": observation, "status": status}
    )
    return {
        "trajectory": [step],
        "usage": [usage],
        "steps": number,
        "action_counts": {action_text: 1} if action is not None else {},
        "status": status,
        "answer": answer,
    }
