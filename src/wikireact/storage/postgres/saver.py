"""LangGraph's `PostgresSaver`, able to save text that holds U+0000 (NUL), losslessly.

PostgreSQL's `text` and `jsonb` cannot hold NUL, and the stock saver keeps a channel whose
value is a string inline in the checkpoint's `jsonb` (an answer such as
`Finish[Pough<NUL>keepsie]` made every save of the episode fail). Values that are not
primitives already go through the serializer into the `bytea` blobs table, which holds
any bytes. `NulSafePostgresSaver.put` sends a string holding NUL that way too, serialized
exactly as the stock serializer serializes a string: the tables keep the stock layout, and
the stock `PostgresSaver` reads such a checkpoint back as the same string.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver

from wikireact.storage.materialise import Specs
from wikireact.storage.postgres import prune as pruning
from wikireact.storage.serde import StrictSerializer, names_refused_thread

NUL = "\u0000"


class _NulText:
    """A string holding NUL, wrapped so the stock `put` stores it as a blob, not inline."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class NulTextSerializer(StrictSerializer):
    """`StrictSerializer`; a wrapped string is serialized as the plain string it holds."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize `obj` (a `_NulText` as its string)."""
        return super().dumps_typed(obj.text if isinstance(obj, _NulText) else obj)


@names_refused_thread
class NulSafePostgresSaver(PostgresSaver):
    """A `PostgresSaver` whose checkpoints may hold strings with NUL (stored as blobs)."""

    def __init__(self, conn: Any, *, location: str = "the PostgreSQL database") -> None:
        """Save through `conn` (a connection or pool, as for `PostgresSaver`) to `location`."""
        super().__init__(conn, serde=NulTextSerializer(location=location))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint; a string channel value holding NUL goes to the blobs table.

        Such a value went there when it was written (its version is new then), so a later
        checkpoint that carries it unchanged finds its blob.
        """
        values = checkpoint["channel_values"]
        wrapped = {k: _NulText(v) for k, v in values.items() if isinstance(v, str) and NUL in v}
        if wrapped:
            checkpoint = {**checkpoint, "channel_values": {**values, **wrapped}}
        return super().put(config, checkpoint, metadata, new_versions)

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        channels: Specs | None = None,
    ) -> None:
        """Keep each thread's latest checkpoint per namespace, its delta channels stored whole.

        `"delete"` removes the threads. `channels` (the graph's) rebuild delta channel
        values; without them a thread whose latest checkpoint needs one is refused
        (`wikireact.storage.postgres.prune`).
        """
        pruning.prune(self, thread_ids, strategy, channels)

    def delete_for_runs(self, run_ids: Sequence[str], *, channels: Specs | None = None) -> None:
        """Delete these runs' checkpoints and writes; the checkpoints they leave are materialised."""
        pruning.delete_for_runs(self, run_ids, channels)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's every checkpoint, blob and write to another thread id."""
        pruning.copy_thread(self, source_thread_id, target_thread_id)
