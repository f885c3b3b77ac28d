"""wikireact's PostgreSQL checkpointer: LangGraph's `PostgresSaver`, packed, and NUL-safe.

Packed (tables: `wikireact.storage.postgres.layout`), so a thread takes about the bytes of
wikireact's SQLite saver, flat in the episode's length:

- a task's writes are ONE `checkpoint_task_writes` row (the SQLite saver's packing and
  compression), not one `checkpoint_writes` row per channel;
- a large list or dict snapshot of a delta channel (the trajectory, the audit trail) is
  stored as 32-item pieces in `checkpoint_pieces`, each once per thread, zlib-compressed,
  so a new snapshot adds only its new pieces; its blob row holds the digests;
- channel versions are integers (a thread the stock saver started keeps string versions);
- what only LangGraph reads of a checkpoint row (versions, the inline values SQL does not
  read) is one payload compressed against its parent's (`wikireact.storage.postgres.deltas`),
  so a checkpoint row costs about a quarter of its stock bytes.

Reads (`get_tuple`, `list`, `get_delta_channel_history`) take writes from both write tables,
so threads written in the stock layout read as before. The stock `PostgresSaver` cannot read
the packed rows (it sees neither the packed writes nor the pieces).

NUL-safe: PostgreSQL's `text` and `jsonb` cannot hold U+0000, and the stock saver keeps a
channel whose value is a string inline in the checkpoint's `jsonb` (an answer such as
`Finish[Pough<NUL>keepsie]` made every save of the episode fail). `put` sends a string
holding NUL to the blobs table, serialized as the stock serializer serializes a string.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Cursor
from psycopg.types.json import Jsonb

from wikireact.storage.materialise import Specs
from wikireact.storage.postgres import layout
from wikireact.storage.postgres import prune as pruning
from wikireact.storage.postgres.deltas import (
    DELTA,
    DeltaWriter,
    Payloads,
    Stored,
    keyframe,
    keyframe_children,
)
from wikireact.storage.postgres.history import delta_history
from wikireact.storage.postgres.layout import PIECES_TYPE, StoredPieces
from wikireact.storage.serde import StrictSerializer, names_refused_thread
from wikireact.storage.sqlite._langgraph import WRITES_IDX_MAP, DeltaSnapshot
from wikireact.storage.sqlite.codec import CompressingSerializer, pack_writes, unpack_writes
from wikireact.storage.sqlite.value_chunks import ChunkWriter, assemble, chunkable

NUL = "\u0000"
_PUT_CHECKPOINT = """
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
    checkpoint, metadata, packed)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO NOTHING
"""
_PUT_DELTA = """
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
    checkpoint, metadata, packed)
SELECT %s, %s, %s, %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM checkpoints
    WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s FOR KEY SHARE)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO NOTHING
"""
"""A checkpoint row whose payload is stored against its parent's, only if that parent is there."""
_REPUT_CHECKPOINT = """
UPDATE checkpoints SET parent_checkpoint_id = %s, checkpoint = %s, metadata = %s, packed = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s
"""
"""A checkpoint saved again (its delta children were made keyframes first)."""
_EXISTING_PIECES = (
    f"SELECT digest FROM {layout.PIECES} WHERE thread_id = %s AND checkpoint_ns = %s "
    "AND digest = ANY(%s)"
)
_ROWS = f"""
SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
    packed,
    (SELECT array_agg(array[w.task_id::bytea, w.channel::bytea, w.type::bytea, w.blob,
        convert_to(w.task_path, 'UTF8'), w.idx::text::bytea])
     FROM checkpoint_writes w WHERE w.thread_id = c.thread_id
     AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
    ) AS pending_writes,
    (SELECT array_agg(array[t.task_id::bytea, convert_to(t.task_path, 'UTF8'), t.data])
     FROM {layout.TASK_WRITES} t WHERE t.thread_id = c.thread_id
     AND t.checkpoint_ns = c.checkpoint_ns AND t.checkpoint_id = c.checkpoint_id
    ) AS packed_writes
FROM checkpoints c """
"""A checkpoint row with its writes of both layouts (stock rows, then packed ones)."""


class _NulText:
    """A string holding NUL, wrapped so the stock `put` stores it as a blob, not inline."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class NulTextSerializer(StrictSerializer):
    """`StrictSerializer`; a wrapped NUL string as the plain string, a pieced snapshot as digests."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize `obj` (a `_NulText` as its string, a snapshot in pieces as its digests)."""
        if isinstance(obj, DeltaSnapshot) and isinstance(obj.value, StoredPieces):
            return PIECES_TYPE, obj.value.dump()
        return super().dumps_typed(obj.text if isinstance(obj, _NulText) else obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize; a pieces blob reads as a snapshot of `StoredPieces` (filled by the saver)."""
        if data[0] == PIECES_TYPE:
            return DeltaSnapshot(StoredPieces.load(data[1]))
        return super().loads_typed(data)


@names_refused_thread
class NulSafePostgresSaver(PostgresSaver):
    """A `PostgresSaver` storing packed rows, whose checkpoints may hold strings with NUL."""

    def __init__(self, conn: Any, *, location: str = "the PostgreSQL database") -> None:
        """Save through `conn` (a connection or pool, as for `PostgresSaver`) to `location`."""
        super().__init__(conn, serde=NulTextSerializer(location=location))
        self.location = location
        self._deltas = DeltaWriter()
        self.piece_serde = CompressingSerializer(location=location)
        self._chunks = ChunkWriter(self.piece_serde)

    def setup(self) -> None:
        """Refuse a database a newer packed layout wrote; create (or migrate) the tables."""
        with self._cursor() as cur:
            layout.check_layout(cur, self.location)
        super().setup()
        with self._cursor() as cur:
            for statement in layout.SCHEMA:
                cur.execute(statement)
            cur.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = 'checkpoints' AND column_name = 'packed'"
            )
            if cur.fetchone() is None:
                cur.execute(layout.PACKED_COLUMN)

    def get_next_version(self, current: Any, channel: None) -> Any:
        """Return the next integer version; a thread with stock string versions keeps them.

        LangGraph compares a thread's versions, and an integer next to a string fails.
        """
        if current is None:
            return 1
        if isinstance(current, int):
            return current + 1
        return super().get_next_version(current, channel)

    def _dump_blobs(
        self,
        thread_id: str,
        checkpoint_ns: str,
        values: dict[str, Any],
        versions: ChannelVersions,
    ) -> list[tuple[str, str, str, str, str, bytes | None]]:
        """Return the stock blob rows, integer versions written as text (the column's type)."""
        texts: ChannelVersions = {k: str(v) for k, v in versions.items()}
        return super()._dump_blobs(thread_id, checkpoint_ns, values, texts)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint; large new snapshots in pieces, strings holding NUL as blobs.

        A string holding NUL went to the blobs table when it was written (its version is new
        then), so a later checkpoint that carries it unchanged finds its blob.
        """
        configurable = config["configurable"]
        thread_id, ns = str(configurable["thread_id"]), str(configurable["checkpoint_ns"])
        parent_id = configurable.get("checkpoint_id")
        values = checkpoint["channel_values"]
        changed: dict[str, Any] = {
            k: _NulText(v) for k, v in values.items() if isinstance(v, str) and NUL in v
        }
        fresh = {k: v for k, v in values.items() if k in new_versions}
        inline: dict[str, Any] = {}
        blobs: dict[str, Any] = {}
        for k, v in {**values, **changed}.items():
            if isinstance(v, DeltaSnapshot):
                inline[k], blobs[k] = True, v
            elif v is None or isinstance(v, str | int | float | bool):
                inline[k] = v
            else:
                blobs[k] = v
        marks = {k for k, v in values.items() if isinstance(v, DeltaSnapshot)}
        row, meta, payload = layout.pack_checkpoint(
            {**checkpoint, "channel_values": inline},
            get_serializable_checkpoint_metadata(config, metadata),
            marks,
        )
        with self._cursor() as cur, cur.connection.transaction():
            stored = self.store_pieces(cur, thread_id, ns, fresh)
            blobs.update(stored)
            fresh_versions = {k: v for k, v in new_versions.items() if k in blobs}
            if fresh_versions:
                cur.executemany(
                    self.UPSERT_CHECKPOINT_BLOBS_SQL,
                    self._dump_blobs(thread_id, ns, blobs, fresh_versions),
                )
            key = (thread_id, ns, checkpoint["id"])
            remembered = self._put_row(cur, key, parent_id, (Jsonb(row), Jsonb(meta)), payload)
        self._deltas.stored(thread_id, ns, remembered)
        for channel, snapshot in stored.items():
            self._chunks.stored((thread_id, ns, channel), snapshot.value.chunked)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def _put_row(
        self,
        cur: Cursor[Any],
        key: tuple[str, str, str],
        parent_id: str | None,
        jsonb: tuple[Jsonb, Jsonb],
        payload: bytes,
    ) -> Stored:
        """Insert a checkpoint row, its payload against its parent's where that is safe.

        A delta goes in only while its parent row is there (locked until the commit, so a
        prune deleting it waits, then sees this child and makes it a keyframe); otherwise a
        keyframe. A checkpoint saved again first turns its delta children into keyframes.
        """
        thread_id, ns, checkpoint_id = key
        packed, remembered = self._deltas.encode(thread_id, ns, checkpoint_id, parent_id, payload)
        if packed[:1] == DELTA:
            cur.execute(_PUT_DELTA, (*key, parent_id, *jsonb, packed, thread_id, ns, parent_id))
            if cur.rowcount == 1:
                return remembered
            packed, remembered = keyframe(payload), Stored(checkpoint_id, payload, 0)
        cur.execute(_PUT_CHECKPOINT, (*key, parent_id, *jsonb, packed))
        if cur.rowcount == 0:
            keyframe_children(cur, thread_id, ns, [checkpoint_id])
            cur.execute(_REPUT_CHECKPOINT, (parent_id, *jsonb, packed, *key))
        return remembered

    def store_pieces(
        self, cur: Cursor[Any], thread_id: str, ns: str, values: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Store, in `cur`'s transaction, the pieces of the large snapshots among `values`.

        Return those snapshots' stand-ins: each a `DeltaSnapshot` of `StoredPieces`
        (serialized as its digests); its `chunked` is for `ChunkWriter.stored` once the
        transaction commits. Holds the thread's pieces lock (`pieces_lock`) shared until
        then, so a prune's cleanup of unused pieces runs wholly before or after; pieces this
        writer stored before and a prune deleted since are stored again.
        """
        out: dict[str, Any] = {}
        new: list[tuple[str, str, bytes, str, bytes]] = []
        known: dict[bytes, Any] = {}
        for channel, value in values.items():
            if isinstance(value, DeltaSnapshot) and chunkable(value.value):
                chunked = self._chunks.split((thread_id, ns, channel), value.value)
                pieces = _Pieces(chunked.kind, chunked.digests)
                pieces.chunked = chunked
                out[channel] = DeltaSnapshot(pieces)
                new += [(thread_id, ns, *piece) for piece in chunked.new]
                known.update((digest, piece) for piece, digest in chunked.remembered)
        if not out:
            return out
        pruning.pieces_lock(cur, thread_id, ns, shared=True)
        reused = sorted(set(known) - {piece[2] for piece in new})
        if reused:
            cur.execute(_EXISTING_PIECES, (thread_id, ns, reused))
            missing = set(reused) - {bytes(r["digest"]) for r in cur.fetchall()}
            for digest in sorted(missing):
                type_, data = self.piece_serde.dumps_typed(known[digest])
                new.append((thread_id, ns, digest, type_, data))
        if new:
            cur.executemany(
                f"INSERT INTO {layout.PIECES} (thread_id, checkpoint_ns, digest, type, data) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                new,
            )
        return out

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes in its one row, with `PostgresSaver`'s replace/ignore rules.

        Writes only to special channels (errors, interrupts) replace the task's earlier ones
        at their index; others are ignored where the task has a write at that index.
        """
        configurable = config["configurable"]
        key = (
            str(configurable["thread_id"]),
            str(configurable["checkpoint_ns"]),
            str(configurable["checkpoint_id"]),
            str(task_id),
        )
        replace = all(channel in WRITES_IDX_MAP for channel, _ in writes)
        new = [
            (WRITES_IDX_MAP.get(channel, idx), channel, *self.serde.dumps_typed(value))
            for idx, (channel, value) in enumerate(writes)
        ]
        where = "thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s AND task_id = %s"
        with self._cursor() as cur, cur.connection.transaction():
            cur.execute(
                f"INSERT INTO {layout.TASK_WRITES} (thread_id, checkpoint_ns, checkpoint_id, "
                "task_id, task_path, data) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                (*key, task_path, pack_writes(new)),
            )
            if cur.rowcount == 1:
                return
            row = cur.execute(
                f"SELECT data FROM {layout.TASK_WRITES} WHERE {where} FOR UPDATE", key
            ).fetchone()
            merged = {w[0]: w for w in unpack_writes(row["data"])} if row else {}
            for write in new:
                if replace or write[0] not in merged:
                    merged[write[0]] = write
            cur.execute(
                f"UPDATE {layout.TASK_WRITES} SET data = %s WHERE {where}",
                (pack_writes(sorted(merged.values(), key=lambda w: w[0])), *key),
            )

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint `config` names (or the thread's latest), with its pending writes."""
        configurable = config["configurable"]
        args: tuple[Any, ...] = (
            str(configurable["thread_id"]),
            configurable.get("checkpoint_ns", ""),
        )
        where = "WHERE thread_id = %s AND checkpoint_ns = %s"
        if checkpoint_id := get_checkpoint_id(config):
            where, args = where + " AND checkpoint_id = %s", (*args, checkpoint_id)
        found = self._read(where + " ORDER BY checkpoint_id DESC LIMIT 1", args)
        return found[0] if found else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """List checkpoints newest first, as `PostgresSaver.list` does."""
        where, args = self._search_where(config, filter, before)
        query = where + " ORDER BY checkpoint_id DESC"
        if limit is not None:
            query, args = query + " LIMIT %s", [*args, int(limit)]
        yield from self._read(query, tuple(args))

    def _read(self, where: str, args: tuple[Any, ...]) -> builtins.list[CheckpointTuple]:
        """Return the checkpoints a WHERE clause selects, blobs, writes and pieces read."""
        with self._cursor() as cur:
            cur.execute(_ROWS + where, args)
            rows = cur.fetchall()
            pairs: dict[tuple[str, str], set[tuple[str, str]]] = {}
            resolvers: dict[tuple[str, str], Payloads] = {}
            for r in rows:
                found = resolvers.get((r["thread_id"], r["checkpoint_ns"]))
                if found is None:
                    found = Payloads(cur, r["thread_id"], r["checkpoint_ns"])
                    resolvers[(r["thread_id"], r["checkpoint_ns"])] = found
                found.add({r["checkpoint_id"]: (r["parent_checkpoint_id"], r["packed"])})
            decoded = []
            for r in rows:
                checkpoint, metadata = layout.unpack_checkpoint(
                    r["checkpoint"],
                    r["metadata"],
                    resolvers[(r["thread_id"], r["checkpoint_ns"])].payload(r["checkpoint_id"]),
                    r["checkpoint_id"],
                )
                decoded.append((checkpoint, metadata))
                pairs.setdefault((r["thread_id"], r["checkpoint_ns"]), set()).update(
                    (k, str(v)) for k, v in checkpoint["channel_versions"].items()
                )
            blobs: dict[tuple[str, str, str, str], tuple[str, bytes]] = {}
            for (thread_id, ns), wanted in pairs.items():
                listed = sorted(wanted)
                cur.execute(
                    layout.BLOBS_SQL,
                    (thread_id, ns, [p[0] for p in listed], [p[1] for p in listed]),
                )
                blobs |= {
                    (thread_id, ns, b["channel"], b["version"]): (b["type"], b["blob"])
                    for b in cur.fetchall()
                }
        out: builtins.list[CheckpointTuple] = []
        for r, (checkpoint, metadata) in zip(rows, decoded, strict=True):
            key = (r["thread_id"], r["checkpoint_ns"])
            values = dict(checkpoint.get("channel_values") or {})
            for channel, version in checkpoint["channel_versions"].items():
                blob = blobs.get((*key, channel, str(version)))
                if blob is not None and blob[0] != "empty":
                    values[channel] = self.serde.loads_typed(blob)
            checkpoint["channel_values"] = values
            writes = [*(r["pending_writes"] or []), *layout.stock_write_rows(r["packed_writes"])]
            config: RunnableConfig = {
                "configurable": {
                    "thread_id": key[0],
                    "checkpoint_ns": key[1],
                    "checkpoint_id": r["checkpoint_id"],
                }
            }
            parent = r["parent_checkpoint_id"]
            out.append(
                CheckpointTuple(
                    config,
                    checkpoint,
                    metadata,
                    {"configurable": {**config["configurable"], "checkpoint_id": parent}}
                    if parent
                    else None,
                    self._load_writes(writes),
                )
            )
            self._assemble([values], config)
        return out

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Return each channel's seed and writes along the target's ancestors (oldest first)."""
        if not channels:
            return {}
        configurable = config["configurable"]
        target = get_checkpoint_id(config)
        if not target:
            latest = self.get_tuple(config)
            if latest is None:
                return {ch: {"writes": []} for ch in channels}
            target = latest.config["configurable"]["checkpoint_id"]
        found = delta_history(
            self,
            str(configurable["thread_id"]),
            configurable.get("checkpoint_ns", ""),
            target,
            list(channels),
        )
        self._assemble([found], config, seeds=True)
        return found

    def _assemble(
        self, holders: Sequence[Any], config: RunnableConfig, *, seeds: bool = False
    ) -> None:
        """Replace, in each mapping of `holders`, every snapshot stored in pieces by its value.

        The mappings are channel values (or, with `seeds`, delta histories, whose `seed` is
        replaced); all belong to the thread and namespace of `config`.
        """
        spots: list[tuple[dict[str, Any], str, StoredPieces]] = []
        for holder in holders:
            for name, value in holder.items():
                box, key = (value, "seed") if seeds else (holder, name)
                found = box.get(key) if seeds else value
                if isinstance(found, DeltaSnapshot) and isinstance(found.value, StoredPieces):
                    spots.append((box, key, found.value))
        if not spots:
            return
        configurable = config["configurable"]
        digests = sorted({d for _, _, pieces in spots for d in pieces.digests})
        with self._cursor() as cur:
            cur.execute(
                f"SELECT digest, type, data FROM {layout.PIECES} WHERE thread_id = %s "
                "AND checkpoint_ns = %s AND digest = ANY(%s)",
                (str(configurable["thread_id"]), configurable.get("checkpoint_ns", ""), digests),
            )
            stored = {bytes(r["digest"]): (r["type"], r["data"]) for r in cur.fetchall()}
        decoded: dict[bytes, Any] = {}
        for box, key, pieces in spots:
            missing = [d for d in pieces.digests if d not in stored]
            if missing:
                raise ValueError(
                    f"thread {configurable['thread_id']!r}: {len(missing)} stored piece(s) of "
                    f"channel {key!r} are missing from {layout.PIECES}"
                )
            parts = [
                decoded[d]
                if d in decoded
                else decoded.setdefault(d, self.piece_serde.loads_typed(stored[d]))
                for d in pieces.digests
            ]
            box[key] = DeltaSnapshot(assemble(pieces.kind, parts))

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints, blobs, writes (both layouts) and pieces."""
        super().delete_thread(thread_id)
        with self._cursor() as cur:
            for table in (layout.TASK_WRITES, layout.PIECES):
                cur.execute(f"DELETE FROM {table} WHERE thread_id = %s", (str(thread_id),))
        self.forget(str(thread_id))

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
        """Copy a thread's every checkpoint, blob, write and piece to another thread id."""
        pruning.copy_thread(self, source_thread_id, target_thread_id)

    def forget(self, thread_id: str) -> None:
        """Forget which pieces and payloads of a thread this saver stored (its rows changed)."""
        self._chunks.forget(str(thread_id))
        self._deltas.forget({str(thread_id)})


class _Pieces(StoredPieces):
    """`StoredPieces` of a snapshot being saved, with what `ChunkWriter.stored` needs after."""

    __slots__ = ("chunked",)
    chunked: Any
