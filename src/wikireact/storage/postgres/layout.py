"""The packed layout of the PostgreSQL saver: two tables beside the stock ones, and their rows.

LangGraph's `PostgresSaver` stores one `checkpoint_writes` row per channel write and one
`checkpoint_blobs` row per channel version, each full value of a growing channel whole: on
a long episode three times the bytes of wikireact's SQLite saver, and growing with its
length. `NulSafePostgresSaver` keeps the stock `checkpoints` and `checkpoint_blobs` tables
(queries on `checkpoint`/`metadata` jsonb, e.g. `wikireact threads list`, keep working) and adds:

- `checkpoint_task_writes`: a task's writes in ONE row, packed and compressed as the SQLite
  saver packs them (`wikireact.storage.sqlite.codec.pack_writes`);
- `checkpoints.packed`: the payload, what only LangGraph reads of a checkpoint (channel
  versions, versions seen, updated channels, the delta counters of its metadata, the inline
  values SQL does not read), compressed against its parent's payload
  (`wikireact.storage.postgres.deltas`); the `checkpoint` jsonb keeps its time, its status
  and steps (`wikireact threads list` reads them there) and the marks of its snapshots, the
  `metadata` jsonb the rest of the metadata (`list(filter=...)`, runs);
- `checkpoint_pieces`: the 32-item pieces of large delta-channel snapshots (the trajectory,
  the audit trail), each stored once per thread (`wikireact.storage.sqlite.value_chunks`);
  the snapshot's `checkpoint_blobs` row holds only its pieces' digests (`PIECES_TYPE`).

Rows of the stock layout (threads written by `PostgresSaver`, or by this saver before it
packed) are read as before: reads take writes from both tables, a row without `packed`
as the stock saver reads it. Rows of packed layout 1 (a payload alone, every inline value
and the id in the jsonb) read too.

The database records the newest packed layout that wrote it (`LAYOUT_TABLE`); this code
refuses one a newer layout wrote (`check_layout`) rather than misread or prune its rows.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast

from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata

from wikireact.errors import ThreadsError
from wikireact.storage.materialise import COUNTERS
from wikireact.storage.postgres.deltas import dump_payload
from wikireact.storage.sqlite.codec import unpack_writes
from wikireact.storage.sqlite.value_chunks import DIGEST_BYTES

TASK_WRITES = "checkpoint_task_writes"
PIECES = "checkpoint_pieces"
STOCK_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
TABLES = (*STOCK_TABLES, TASK_WRITES, PIECES)
"""Every table holding a thread's checkpoint rows, keyed by thread_id first."""
SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {TASK_WRITES} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    data BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id)
)""",
    f"""CREATE TABLE IF NOT EXISTS {PIECES} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    digest BYTEA NOT NULL,
    type TEXT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, digest)
)""",
)
"""The packed tables (no separate thread_id index: the primary key starts with it)."""
PACKED_COLUMN = "ALTER TABLE checkpoints ADD COLUMN IF NOT EXISTS packed BYTEA"
IN_JSONB = ("status", "steps")
"""The inline channel values kept in the `checkpoint` jsonb (`wikireact threads list` reads them)."""
LAYOUT_VERSION = 2
"""The packed layout this code writes (1: payloads alone; 2: against the parent's, fewer
values in the jsonb). A database a newer layout wrote is refused (`check_layout`)."""
LAYOUT_TABLE = "wikireact_pg_layout"
_LAYOUT_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {LAYOUT_TABLE} (one BOOLEAN PRIMARY KEY DEFAULT TRUE "
    "CHECK (one), version INTEGER NOT NULL)"
)
_RECORD_LAYOUT = (
    f"INSERT INTO {LAYOUT_TABLE} (version) VALUES (%s) ON CONFLICT (one) DO UPDATE "
    f"SET version = greatest({LAYOUT_TABLE}.version, EXCLUDED.version) RETURNING version"
)
COLUMNS = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, "
    "packed",
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob",
    TASK_WRITES: "checkpoint_ns, checkpoint_id, task_id, task_path, data",
    PIECES: "checkpoint_ns, digest, type, data",
}
"""Each table's columns after thread_id (what `copy_thread` copies)."""
BLOBS_SQL = (
    "SELECT channel, version, type, blob FROM checkpoint_blobs "
    "WHERE thread_id = %s AND checkpoint_ns = %s AND (channel, version) IN "
    "(SELECT * FROM unnest(%s::text[], %s::text[]))"
)
"""A thread namespace's blobs at these (channel, version) pairs (two arrays)."""
PIECES_TYPE = "wikireact-pieces"
"""Type tag of a `checkpoint_blobs` row holding a snapshot's piece digests, not its value."""


class StoredPieces:
    """A snapshot stored in pieces, as read from its blob: its kind and its pieces' digests."""

    __slots__ = ("digests", "kind")

    def __init__(self, kind: int, digests: Sequence[bytes]) -> None:
        """Remember the value's kind (0 list, 1 dict) and its pieces' digests, in order."""
        self.kind = kind
        self.digests = list(digests)

    def dump(self) -> bytes:
        """Return the blob: the kind byte, then the digests."""
        return bytes([self.kind]) + b"".join(self.digests)

    @classmethod
    def load(cls, blob: bytes) -> StoredPieces:
        """Undo `dump`."""
        body = blob[1:]
        return cls(
            blob[0],
            [body[at : at + DIGEST_BYTES] for at in range(0, len(body), DIGEST_BYTES)],
        )


def stock_write_rows(packed: Sequence[Sequence[bytes]] | None) -> list[list[Any]]:
    """Return packed writes (`packed_writes` rows) as the stock query's `pending_writes` rows.

    [task id, channel, type, value, task path, index], all bytes, as
    `BasePostgresSaver._load_writes` takes them.
    """
    return [
        [task_id, channel.encode(), type_.encode(), value, path, str(idx).encode()]
        for task_id, path, data in packed or []
        for idx, channel, type_, value in unpack_writes(data)
    ]


def pack_checkpoint(
    checkpoint: Mapping[str, Any], metadata: Mapping[str, Any], in_jsonb: Collection[str]
) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    """Return the `checkpoint` jsonb, the `metadata` jsonb and the payload of a checkpoint row.

    The jsonb keeps the time and, of the inline channel values, those SQL reads (`IN_JSONB`)
    and those named in `in_jsonb` (snapshot marks); the payload (JSON bytes, stored by
    `wikireact.storage.postgres.deltas`) holds the rest. The id is the row's `checkpoint_id`.
    """
    values = dict(checkpoint.get("channel_values") or {})
    shown = {k: v for k, v in values.items() if k in IN_JSONB or k in in_jsonb}
    rest = {k: v for k, v in checkpoint.items() if k not in ("id", "ts", "channel_values")}
    meta = {k: v for k, v in metadata.items() if k != COUNTERS}
    payload = {
        "checkpoint": rest,
        "metadata": {k: v for k, v in metadata.items() if k == COUNTERS},
        "values": {k: v for k, v in values.items() if k not in shown},
    }
    return {"ts": checkpoint["ts"], "channel_values": shown}, meta, dump_payload(payload)


def unpack_checkpoint(
    checkpoint: Mapping[str, Any],
    metadata: Mapping[str, Any],
    payload: Mapping[str, Any] | None,
    checkpoint_id: str,
) -> tuple[Checkpoint, CheckpointMetadata]:
    """Undo `pack_checkpoint` (layout 1 rows too; a stock row, without payload, is returned as it is)."""
    if payload is None:
        return cast(Checkpoint, dict(checkpoint)), cast(CheckpointMetadata, dict(metadata))
    values = {**payload.get("values", {}), **(checkpoint.get("channel_values") or {})}
    return (
        cast(
            Checkpoint,
            {"id": checkpoint_id, **checkpoint, **payload["checkpoint"], "channel_values": values},
        ),
        cast(CheckpointMetadata, {**metadata, **payload["metadata"]}),
    )


def channel_versions(
    checkpoint: Mapping[str, Any], payload: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Return a checkpoint row's channel versions (from its payload, or the stock jsonb)."""
    if payload is None:
        return dict(checkpoint.get("channel_versions") or {})
    return dict(payload["checkpoint"].get("channel_versions") or {})


def check_layout(cur: Any, location: str) -> None:
    """Record that this layout writes the database; refuse one a newer layout wrote.

    Run before anything else touches the tables: rows of a layout this code does not know
    are never misread, rewritten or pruned.
    """
    cur.execute(_LAYOUT_SCHEMA)
    cur.execute(_RECORD_LAYOUT, (LAYOUT_VERSION,))
    row = cur.fetchone()
    found = int(row["version"]) if row else LAYOUT_VERSION
    if found > LAYOUT_VERSION:
        raise ThreadsError(
            f"{location} was written by a newer wikireact (packed layout {found}, this one "
            f"reads {LAYOUT_VERSION}); upgrade wikireact or use another --db"
        )
