"""A thread's checkpoints in one line each: what `wikireact history` lists.

`graph.get_state_history` builds a full `StateSnapshot` per checkpoint, replaying every
delta channel (trajectory, page text...) from its writes: about a second for a 100-step
thread. Listing needs only each checkpoint's own small values, so with wikireact's saver
`list_checkpoints` reads just the checkpoint rows; other savers fall back to the snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from wikireact.storage.sqlite.saver import CompactSqliteSaver

TRIGGER_PREFIX = "branch:to:"
"""The channel through which LangGraph schedules the node named after it."""


@dataclass(frozen=True)
class CheckpointSummary:
    """One checkpoint of a thread, as `wikireact history` prints it."""

    checkpoint_id: str
    superstep: int | None
    """LangGraph's step counter (-1 for the input checkpoint); None if not recorded."""
    steps: int
    """ReAct steps completed so far."""
    status: str | None
    """The episode's status then (None before the first step)."""
    next: tuple[str, ...]
    """The nodes that run next from this checkpoint (empty at the end)."""
    parent_id: str | None = None
    """The checkpoint it continues (None for the first): two with one parent are a fork."""


def list_checkpoints(saver: BaseCheckpointSaver, thread_id: str) -> list[CheckpointSummary]:
    """Return the thread's checkpoints, newest first (empty for an unknown thread)."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    if isinstance(saver, CompactSqliteSaver):
        return [
            _summary(t.config, t.checkpoint["channel_values"], t.metadata, t.parent_config)
            for t in saver.list_checkpoints(config)
        ]
    from wikireact.graph import build_graph

    return [
        _summary(snap.config, dict(snap.values), snap.metadata, snap.parent_config, snap.next)
        for snap in build_graph(saver).get_state_history(config)
    ]


def _summary(
    config: RunnableConfig,
    values: dict[str, Any],
    metadata: Any,
    parent: RunnableConfig | None,
    next_nodes: tuple[str, ...] | None = None,
) -> CheckpointSummary:
    if next_nodes is None:  # the nodes whose trigger holds a value not yet consumed
        next_nodes = tuple(
            sorted(
                ("__start__",)
                if "__start__" in values
                else (
                    k.removeprefix(TRIGGER_PREFIX) for k in values if k.startswith(TRIGGER_PREFIX)
                )
            )
        )
    step = (metadata or {}).get("step")
    return CheckpointSummary(
        checkpoint_id=str(config["configurable"]["checkpoint_id"]),
        superstep=step if isinstance(step, int) else None,
        steps=int(values.get("steps", 0)),
        status=values.get("status"),
        next=next_nodes,
        parent_id=(parent or {}).get("configurable", {}).get("checkpoint_id"),
    )
