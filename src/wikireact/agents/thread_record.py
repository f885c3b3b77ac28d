"""A thread's question, agent and settings: its registry row, or else what its checkpoints hold.

The CLI registers every thread it starts (`Threads.register`). A thread run through the
library (`build_graph(open_threads(DB).saver)`, or LangGraph's own `SqliteSaver` /
`PostgresSaver` on the same store) has checkpoints and no registry row. Its question and
settings are in its state (`question`, and `context`, which every episode keeps:
`wikireact.episode.stored_context`); its agent is named in its checkpoints' metadata
(`GRAPH_METADATA_KEY`, saved by every wikireact graph) or, in checkpoints saved before
that, told by the channels they hold. What the checkpoints cannot tell is said in `note`:
a model or wiki object given to `build_graph` is not recorded (the settings name
`Context`'s), nor the snapshot the thread started on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple

from wikireact.agents import AGENTS, DEFAULT_AGENT, load_agent
from wikireact.errors import ThreadsError
from wikireact.storage.registry import GRAPH_METADATA_KEY
from wikireact.storage.thread_info import ThreadInfo
from wikireact.storage.threads import Threads

GRAPH_PREFIX = "wikireact-"
"""Every agent's graph is named `wikireact-AGENT`, except ReAct's: `wikireact`."""


@dataclass(frozen=True)
class ThreadRecord:
    """What a thread started with, as `history`, `resume` and `threads` use it."""

    question: str
    agent: str
    settings: dict[str, Any]
    """The `Context` fields it runs with."""
    snapshot_id: str | None
    """The snapshot it started on (None: not a snapshot, or not known)."""
    note: str | None = None
    """For a thread without a registry row: one line saying where this was read and what
    is not known (None for a registered thread)."""


def thread_record(store: Threads, thread_id: str) -> ThreadRecord:
    """Return the thread's record; raise `ThreadsError` if it has neither registry row nor checkpoint."""
    try:
        question = store.question(thread_id)
    except ThreadsError:
        saved = store.saver.get_tuple({"configurable": {"thread_id": thread_id}})
        if saved is None:
            raise
        return _from_checkpoint(thread_id, saved)
    return ThreadRecord(
        question=question,
        agent=store.agent(thread_id),
        settings=store.context_fields(thread_id),
        snapshot_id=store.snapshot_id(thread_id),
    )


def _from_checkpoint(thread_id: str, saved: CheckpointTuple) -> ThreadRecord:
    values = saved.checkpoint["channel_values"]
    agent = _agent_named(saved.metadata.get(GRAPH_METADATA_KEY)) or _agent_holding(
        frozenset(saved.checkpoint["channel_versions"])
    )
    settings = dict(values.get("context") or {})
    if settings:
        told = (
            f"a model or wiki given to build_graph() is not recorded: resume runs with model "
            f"{settings.get('model')!r} and wiki {settings.get('wiki')!r} unless given --model/--wiki"
        )
    else:
        told = "its settings are not recorded yet: resume runs with the defaults"
    note = (
        f"thread {thread_id!r} was not started by the CLI: its question, agent ({agent}) "
        f"and settings are read from its checkpoints; {told}"
    )
    return ThreadRecord(
        question=str(values.get("question") or ""),
        agent=agent,
        settings=settings,
        snapshot_id=None,
        note=note,
    )


def _agent_named(graph_name: object) -> str | None:
    """Return the agent whose graph is named `graph_name` (None for another name)."""
    if graph_name == GRAPH_PREFIX.rstrip("-"):
        return DEFAULT_AGENT
    name = str(graph_name).removeprefix(GRAPH_PREFIX)
    return name if str(graph_name).startswith(GRAPH_PREFIX) and name in AGENTS else None


def _agent_holding(channels: frozenset[str]) -> str:
    """Return the first agent (ReAct first) whose graph has every one of `channels`."""
    fitting = [name for name in AGENTS if channels <= _channels_of(name)]
    return fitting[0] if fitting else DEFAULT_AGENT


@functools.cache
def _channels_of(agent: str) -> frozenset[str]:
    return frozenset(load_agent(agent).build_graph().channels)


def with_checkpoint_records(store: Threads, infos: list[ThreadInfo]) -> list[ThreadInfo]:
    """Return `infos` (`threads list`), each thread without a registry row completed.

    Its question, agent and task are read from its checkpoints (`thread_record`).
    """
    out = []
    for info in infos:
        record = None
        if not info.question:
            with contextlib.suppress(ThreadsError):  # neither registered nor checkpointed
                record = thread_record(store, info.thread_id)
        if record is not None and record.note is not None:
            info = dataclasses.replace(
                info,
                question=record.question,
                agent=record.agent,
                task=str(record.settings.get("task") or info.task),
            )
        out.append(info)
    return out
