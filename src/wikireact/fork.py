"""`fork`: give one step another action, as if the model had written it, on a new branch.

A fork goes back to the checkpoint where `reason` had just written the step's model reply
and replaces that reply (text, or tool call in the tools protocol) with one stating the
new action. `parse` then runs on it as on any reply, so everything it derives is
recomputed: the kind (a Finish forked into a Search is executed), the repetition key in
the environment state the step met, the earlier step a repeat points to. Nothing after
that checkpoint is carried over, and the original branch stays in the thread's history.

    forked = fork(graph, config, action="Search[Louvre]")   # the step in progress, or the last
    graph.invoke(None, forked)                               # continue the new branch

Under approval the forked action still waits for a decision. The step keeps the token
counts of the model call it replaces.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from wikireact.context import Context
from wikireact.errors import ConfigurationError
from wikireact.prompting.react import render_action
from wikireact.protocols.text import Action, parse_action, parse_output
from wikireact.protocols.tools import parse_tool_calls, tool_call_of
from wikireact.state import CurrentStep, InputState, OutputState, State, Step, new_step

Graph = CompiledStateGraph[State, Context, InputState, OutputState]


def fork(
    graph: Graph,
    config: RunnableConfig,
    *,
    action: str,
    thought: str | None = None,
    step: int | None = None,
) -> RunnableConfig:
    """Fork the thread at `config` so that step `step` proposes `action`; return the new branch's config.

    Args:
        graph: a compiled wikireact graph with a checkpointer.
        config: the thread, or one of its checkpoints (`StateSnapshot.config`).
        action: the new action, e.g. `Search[Louvre]` (also in the tools protocol).
        thought: the step's new thought; default: the one the model wrote.
        step: which step (1-based); default: the step in progress at `config`, else its last.

    Raises `ConfigurationError` (one line) for an invalid action or a step the branch lacks.
    """
    parsed = parse_action(action)
    if not isinstance(parsed, Action):
        raise ConfigurationError(f"cannot fork with {action!r}: {parsed.message}")
    snapshot = graph.get_state(config)
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if not snapshot.values:
        raise ConfigurationError(f"thread {thread_id!r} has no checkpoint to fork")
    number = step if step is not None else _step_at(snapshot)
    before = _reply_of(graph, snapshot, number)
    if before is None:
        raise ConfigurationError(f"thread {thread_id!r} has no step {number} on this branch")
    reply = _rewritten_reply(before.values, number, parsed, thought)
    return graph.update_state(before.config, {"current": reply}, as_node="reason")


def _step_at(snapshot: StateSnapshot) -> int:
    """Return the step in progress at `snapshot` (between reason and observe), else its last."""
    steps = int(snapshot.values.get("steps", 0))
    in_progress = bool(snapshot.next) and snapshot.next[0] in ("parse", "act", "observe")
    return steps + 1 if in_progress else steps


def _reply_of(graph: Graph, snapshot: StateSnapshot, number: int) -> StateSnapshot | None:
    """Return the checkpoint on `snapshot`'s branch just after `reason` wrote step `number`."""
    state: StateSnapshot | None = snapshot
    while state is not None and number >= 1:
        if state.next == ("parse",) and state.values.get("steps", 0) == number - 1:
            return state
        if state.values.get("steps", 0) < number - 1 or state.parent_config is None:
            return None
        state = graph.get_state(state.parent_config)
    return None


def _rewritten_reply(
    values: dict[str, Any], number: int, action: Action, thought: str | None
) -> CurrentStep:
    """Return step `number`'s reply with `action` (and `thought`), in the episode's protocol."""
    settings = values.get("context") or {}
    method = settings.get("method", "react")
    current: CurrentStep = values.get("current") or CurrentStep()
    raw, calls = current.get("raw", ""), current.get("calls") or []
    if settings.get("protocol") == "tools":
        kept = parse_tool_calls(raw, calls).thought if thought is None else thought
        call_id = calls[0]["id"] if calls else f"call_{number}_1"
        call = tool_call_of(action, call_id)
        new_calls = [{"id": call["id"], "name": call["name"], "args": call["args"]}]
        return new_step(**_usage(current), raw=kept, calls=new_calls)
    kept = parse_output(raw).thought if thought is None else thought
    shown = Step(kind="executed", thought=kept, action=str(action), observation="", raw="")
    return new_step(**_usage(current), raw=render_action(number, shown, method), calls=[])


def _usage(current: CurrentStep) -> dict[str, int]:
    """Return the token counts of the model call whose reply is replaced."""
    return {
        "input_tokens": current.get("input_tokens", 0),
        "output_tokens": current.get("output_tokens", 0),
    }
