"""Delta channels written out whole, so a checkpoint stands without its ancestors.

A `DeltaChannel` stores its full value only every few updates (a `DeltaSnapshot`); in
between, a checkpoint holds nothing for it and a read replays the writes of its ancestors
back to the nearest snapshot (`get_delta_channel_history`). Deleting those ancestors (a
`prune`, a `delete_for_runs`) would silently empty the channel: LangGraph's own savers
refuse such threads. wikireact's savers first *materialise* each checkpoint that is kept
while its ancestors go: its delta channels' values are rebuilt exactly as a read rebuilds
them (the channel's own `from_checkpoint` and `replay_writes`), and stored as full values,
so every later read stops there and gives what it gave before.

Rebuilding a value needs the channel's reducer, which only the graph knows: callers pass
the graph's channels (`delta_channels`); a saver given none refuses a thread whose kept
checkpoint needs one (`NotImplementedError`), changing nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.channels import DeltaChannel
from langgraph.channels.base import BaseChannel
from langgraph.checkpoint.base import CheckpointTuple, DeltaChannelHistory

from wikireact.storage.sqlite._langgraph import DeltaSnapshot

Specs = Mapping[str, BaseChannel]
"""A graph's channels by name (`graph.channels`); only its `DeltaChannel`s are used."""
PRUNE_STRATEGIES = ("keep_latest", "delete")
COUNTERS = "counters_since_delta_snapshot"
"""Checkpoint metadata naming the delta channels updated since their last snapshot."""


def check_prune_args(thread_ids: Iterable[str], strategy: str) -> list[str]:
    """Return the thread ids as strings; refuse a single string or an unknown strategy."""
    if isinstance(thread_ids, str):
        raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
    if strategy not in PRUNE_STRATEGIES:
        raise ValueError(f"Unknown prune strategy: {strategy!r}")
    return [str(t) for t in thread_ids]


def delta_channels(graphs: Iterable[Any]) -> dict[str, DeltaChannel]:
    """Return the `DeltaChannel`s of compiled graphs by name (the first graph's win)."""
    out: dict[str, DeltaChannel] = {}
    for graph in graphs:
        for name, channel in graph.channels.items():
            if isinstance(channel, DeltaChannel):
                out.setdefault(name, channel)
    return out


def replayed_channels(saved: CheckpointTuple, specs: Specs) -> list[str]:
    """Return the channels a read of `saved` rebuilds from its ancestors.

    Those the metadata counts as delta channels, or `specs` holds as such, that have a
    version (were written) but no value stored in this checkpoint.
    """
    checkpoint = saved.checkpoint
    versions, values = checkpoint["channel_versions"], checkpoint["channel_values"]
    counted: Mapping[str, Any] = (saved.metadata or {}).get(COUNTERS) or {}  # type: ignore[assignment]
    named = {k for k, spec in specs.items() if isinstance(spec, DeltaChannel)}
    return sorted(k for k in set(counted) | named if k in versions and k not in values)


class HistoryReader(Protocol):
    """A saver, as far as rebuilding delta channels goes."""

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Return each channel's seed and writes along the checkpoint's ancestors."""


def full_values(
    saver: HistoryReader, saved: CheckpointTuple, specs: Specs | None
) -> dict[str, Any]:
    """Return the delta channels of `saved` to store whole there, as `DeltaSnapshot`s.

    Raises `NotImplementedError` (nothing changed) when a channel that has history
    to replay has no reducer in `specs`.
    """
    specs = specs or {}
    names = replayed_channels(saved, specs)
    if not names:
        return {}
    histories = saver.get_delta_channel_history(config=saved.config, channels=names)
    out: dict[str, Any] = {}
    unknown: list[str] = []
    for name in names:
        history = histories[name]
        if "seed" not in history and not history["writes"]:
            continue  # nothing to replay: read as empty with or without ancestors
        spec = specs.get(name)
        if not isinstance(spec, DeltaChannel):
            unknown.append(name)
            continue
        channel = spec.from_checkpoint(history.get("seed"))
        channel.replay_writes(history["writes"])
        out[name] = DeltaSnapshot(channel.get())
    if unknown:
        thread_id = saved.config["configurable"]["thread_id"]
        raise NotImplementedError(
            f"thread {thread_id!r}: delta channel(s) {', '.join(unknown)} cannot be written "
            "out whole without the graph's channels (pass channels=graph.channels); "
            "nothing was pruned"
        )
    return out


def with_full_values(saved: CheckpointTuple, full: Mapping[str, Any]) -> dict[str, Any]:
    """Return `saved`'s checkpoint with `full` among its channel values."""
    checkpoint = dict(saved.checkpoint)
    checkpoint["channel_values"] = {**saved.checkpoint["channel_values"], **full}
    return checkpoint
