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

Fork works on ReAct threads (a graph of `wikireact.build_graph`). Anything it cannot use is
refused with a one-line `ConfigurationError` naming it: an action that is not text or not a
valid action, a step that is not a whole number from 1, a config naming no thread, a
checkpoint the thread lacks, another agent's graph or thread, and a thought holding an
`Action`/`Observation` line (the reply would then state that action, not the one asked for).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from wikireact.context import Context
from wikireact.errors import ConfigurationError
from wikireact.history import TRIGGER_PREFIX
from wikireact.prompting.react import render_action
from wikireact.protocols.text import Action, parse_action, parse_output, valid_unicode
from wikireact.protocols.tools import parse_tool_calls, tool_call_of
from wikireact.state import CurrentStep, InputState, OutputState, State, Step, new_step

Graph = CompiledStateGraph[State, Context, InputState, OutputState]
REACT_NODES = frozenset({"reason", "parse", "act", "observe"})
"""The nodes of a ReAct graph: a thread that ran any other was written by another agent."""


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
        graph: a compiled ReAct graph (`wikireact.build_graph`) with a checkpointer.
        config: the thread, or one of its checkpoints (`StateSnapshot.config`).
        action: the new action, e.g. `Search[Louvre]` (also in the tools protocol).
        thought: the step's new thought; default: the one the model wrote.
        step: which step (1-based); default: the step in progress at `config`, else its last.

    Raises `ConfigurationError` (one line) for anything it cannot use (see the module docstring).
    """
    parsed = _checked_action(action)
    number = _checked_step(step)
    _check_thought(thought)
    thread_id = _thread_of(config)
    _check_react_graph(graph)
    snapshot = graph.get_state(config)
    if not snapshot.values:
        raise ConfigurationError(_missing_checkpoint(graph, config, thread_id))
    _check_react_thread(graph, config, thread_id)
    number = number if number is not None else _step_at(snapshot)
    before = _reply_of(graph, snapshot, number)
    if before is None:
        raise ConfigurationError(f"thread {thread_id!r} has no step {number} on this branch")
    reply = _rewritten_reply(before.values, number, parsed, thought)
    return graph.update_state(before.config, {"current": reply}, as_node="reason")


def _checked_action(action: object) -> Action:
    """Return `action` parsed, or refuse what is not text or not a valid action."""
    if not isinstance(action, str):
        raise ConfigurationError(
            f"the action must be text such as 'Search[Louvre]', got {_shown(action)}"
        )
    parsed = parse_action(action)
    if not isinstance(parsed, Action):
        raise ConfigurationError(f"cannot fork with {action!r}: {parsed.message}")
    return parsed


def _checked_step(step: object) -> int | None:
    """Return `step` if it is None or a whole number from 1 (not a bool, not text)."""
    if step is None or (isinstance(step, int) and not isinstance(step, bool) and step >= 1):
        return step
    raise ConfigurationError(f"step must be a whole number from 1, got {_shown(step)}")


def _check_thought(thought: object) -> None:
    """Refuse a thought that is not text, or that the reply would read as an action of its own."""
    if thought is None:
        return
    if not isinstance(thought, str):
        raise ConfigurationError(f"the thought must be text, got {_shown(thought)}")
    probe = parse_output(f"Thought: {thought}\nAction: Finish[probe]")
    kept = " ".join(valid_unicode(thought).split())
    if probe.result != Action("Finish", "probe") or probe.thought != kept:
        raise ConfigurationError(
            f"the thought {_shown(thought)} holds an Action or Observation line; "
            "give the action as `action` and a thought without such lines"
        )


def _thread_of(config: object) -> str:
    """Return the thread id `config` names, or refuse a config that names none."""
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    thread_id = configurable.get("thread_id") if isinstance(configurable, Mapping) else None
    if thread_id is None or thread_id == "":
        raise ConfigurationError(
            "the config names no thread: give {'configurable': {'thread_id': ...}} "
            f"or a checkpoint's config, got {_shown(config)}"
        )
    return str(thread_id)


def _check_react_graph(graph: Graph) -> None:
    """Refuse a graph that is not a ReAct graph with a checkpointer."""
    if not REACT_NODES <= set(graph.nodes):
        nodes = ", ".join(n for n in graph.nodes if not n.startswith("__"))
        raise ConfigurationError(
            f"fork works on ReAct graphs (wikireact.build_graph); this graph runs {nodes}"
        )
    if not isinstance(graph.checkpointer, BaseCheckpointSaver):
        raise ConfigurationError("fork needs a graph with a checkpointer (build_graph(saver))")


def _missing_checkpoint(graph: Graph, config: RunnableConfig, thread_id: str) -> str:
    """Return why `config` has nothing to fork: an unknown checkpoint, or a thread never run."""
    checkpoint_id = config.get("configurable", {}).get("checkpoint_id")
    thread: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    if checkpoint_id is not None and graph.get_state(thread).values:
        return f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}"
    return f"thread {thread_id!r} has no checkpoint to fork: it has not run"


def _check_react_thread(graph: Graph, config: RunnableConfig, thread_id: str) -> None:
    """Refuse a thread another agent wrote (it ran nodes a ReAct graph does not have)."""
    saver = graph.checkpointer
    saved = saver.get_tuple(config) if isinstance(saver, BaseCheckpointSaver) else None
    ran = {
        channel.removeprefix(TRIGGER_PREFIX)
        for channel in (saved.checkpoint["channel_versions"] if saved else {})
        if channel.startswith(TRIGGER_PREFIX)
    }
    foreign = sorted(ran - set(graph.nodes))
    if foreign:
        raise ConfigurationError(
            f"thread {thread_id!r} was run by another agent (its nodes {', '.join(foreign)}); "
            "fork works on ReAct threads only"
        )


def _shown(value: object) -> str:
    """Return `value` as one short line for a message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


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
