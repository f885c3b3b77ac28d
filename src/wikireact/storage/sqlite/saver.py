"""wikireact's SQLite checkpointer: LangGraph's saver API over compact rows of its own.

Per superstep LangGraph saves one checkpoint and, per task, a handful of channel writes.
On a realistic episode the bookkeeping outweighed the content (bench/checkpoint_growth.py),
so `CompactSqliteSaver` keeps the stock `checkpoints` table but (encodings: `wikireact.storage.sqlite.codec`):

- writes channel versions as integers, not ~50-character strings;
- compresses each checkpoint blob and its metadata against a preset dictionary of the names
  every checkpoint repeats (`list(filter=...)` matches metadata in Python, not in SQL), and
  most checkpoint blobs against their parent's too (`wikireact.storage.sqlite.parent_deltas`);
- stores each task's writes as ONE row of `task_writes` instead of one `writes` row per
  channel, each repeating thread, checkpoint and task ids;
- stores a large list or dict snapshot of a delta channel (the trajectory, the audit trail)
  as pieces shared between checkpoints, in `value_chunks` (`wikireact.storage.sqlite.value_chunks`), so
  bytes per step stay flat however long the episode;
- creates its tables WITHOUT ROWID in new files, so keys are not stored twice (table + index);
- records in `checkpoints.snapshots` which delta channels a checkpoint holds a snapshot of,
  so rebuilding a delta channel walks ancestors without decoding them, only back to the
  nearest snapshot of each channel, and caches that ancestry and the ancestors' writes (a
  checkpoint that has a child never changes).

Rows are decoded outside the connection lock, so concurrent threads (the eval) wait less.
Threads written in the stock layout are moved to `task_writes` when a file is opened; reads
(`get_tuple`, `list`, `get_delta_channel_history`) return what `SqliteSaver` would.

The saver owns its storage: it subclasses `BaseCheckpointSaver`, not `SqliteSaver`, so no
stock storage method can reach its tables. Every method of the base is implemented here,
refused with a clear error (`REFUSED`), or inherited because it only calls the saver's own
methods (`INHERITED`); tests/storage/test_saver_surface.py fails for a method LangGraph adds.
The async API is not offered (as with the stock `SqliteSaver`): graphs on it run with
`invoke`/`stream`.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from wikireact.errors import ThreadsError
from wikireact.storage.materialise import Specs
from wikireact.storage.serde import StrictSerializer, names_refused_thread
from wikireact.storage.sqlite import prune as pruning
from wikireact.storage.sqlite._langgraph import WRITES_IDX_MAP, DeltaSnapshot, writes_sort_key
from wikireact.storage.sqlite.codec import (
    ZD1,
    CompressingSerializer,
    Write,
    dump_metadata,
    load_metadata,
    metadata_matches,
    pack_writes,
    plain_payload,
    unpack_writes,
    unsqueeze,
)
from wikireact.storage.sqlite.parent_deltas import DeltaWriter, keyframe_children, with_payloads
from wikireact.storage.sqlite.value_chunks import (
    ChunkWriter,
    assemble,
    chunkable,
    decode_refs,
    encode_refs,
)

__all__ = ["INHERITED", "REFUSED", "CompactSqliteSaver", "CompressingSerializer"]

INHERITED = frozenset(
    {
        "get",  # get_tuple(config).checkpoint
        "config_specs",
        "with_allowlist",  # a shallow copy with another serializer
        # The async API: the base's versions raise NotImplementedError (or call the ones
        # that do), as the stock SqliteSaver's do; graphs run on this saver synchronously.
        "aget",
        "aget_tuple",
        "alist",
        "aput",
        "aput_writes",
        "adelete_thread",
        "adelete_for_runs",
        "acopy_thread",
        "aprune",
        "aget_delta_channel_history",
    }
)
"""Methods of `BaseCheckpointSaver` this saver inherits on purpose (they touch no table)."""
REFUSED: frozenset[str] = frozenset()
"""Storage methods this saver refuses with a clear `NotImplementedError` (none since `prune`)."""

CACHED_CHECKPOINTS = 4096
"""Checkpoints whose ancestry (and, separately, writes) a saver keeps decoded."""
_TASK_WRITES = """
CREATE TABLE IF NOT EXISTS task_writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    data BLOB NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id)
) WITHOUT ROWID
"""
_CHECKPOINTS = """
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint BLOB,
    metadata BLOB,
    snapshots TEXT,
    chunks BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
) WITHOUT ROWID
"""
_VALUE_CHUNKS = """
CREATE TABLE IF NOT EXISTS value_chunks (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    digest BLOB NOT NULL,
    type TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, digest)
) WITHOUT ROWID
"""
_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
)
_ROW = f"{_COLUMNS}, snapshots, chunks"
"""What reads select: a row's columns as `_tuple` takes them."""
_ANCESTORS = (  # blobs only for rows saved without `snapshots` (by the stock layout)
    "WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, snapshots, type, checkpoint) AS ("
    "SELECT checkpoint_id, parent_checkpoint_id, snapshots, type, "
    "CASE WHEN snapshots IS NULL THEN checkpoint END FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? UNION ALL "
    "SELECT c.checkpoint_id, c.parent_checkpoint_id, c.snapshots, c.type, "
    "CASE WHEN c.snapshots IS NULL THEN c.checkpoint END "
    "FROM chain a CROSS JOIN checkpoints c ON c.checkpoint_id = a.parent_checkpoint_id "
    "WHERE c.thread_id = ? AND c.checkpoint_ns = ?) SELECT * FROM chain"
)

Key = tuple[str, str, str]
"""(thread id, checkpoint namespace, checkpoint id)."""
StoredWrites = list[tuple[str, str, bytes]]
"""A checkpoint's `task_writes` rows as stored: (task id, task path, packed writes)."""
TaskWrites = list[tuple[str, Write]]
"""A checkpoint's writes with their task ids, in `writes_sort_key` order."""
Node = tuple[str | None, frozenset[str]]
"""A checkpoint's parent id and the delta channels it holds a value (snapshot) for."""


_THREAD_TABLES = ("checkpoints", "task_writes", "value_chunks")
"""Every table holding a thread's rows, keyed by thread_id first."""


def _where(
    config: RunnableConfig | None, before: RunnableConfig | None
) -> tuple[str, tuple[Any, ...]]:
    """Return the WHERE clause (and its parameters) of `list`: thread, namespace, id, before."""
    clauses: list[str] = []
    params: list[Any] = []
    if config is not None:
        configurable = config["configurable"]
        clauses.append("thread_id = ?")
        params.append(str(configurable["thread_id"]))
        if (ns := configurable.get("checkpoint_ns")) is not None:
            clauses.append("checkpoint_ns = ?")
            params.append(ns)
        if checkpoint_id := get_checkpoint_id(config):
            clauses.append("checkpoint_id = ?")
            params.append(checkpoint_id)
    if before is not None:
        clauses.append("checkpoint_id < ?")
        params.append(get_checkpoint_id(before))
    return ("WHERE " + " AND ".join(clauses) if clauses else "", tuple(params))


def sorted_writes(stored: StoredWrites) -> TaskWrites:
    """Unpack a checkpoint's rows into its writes, in `writes_sort_key` order."""
    found = [
        (path, task_id, write) for task_id, path, data in stored for write in unpack_writes(data)
    ]
    found.sort(key=lambda f: writes_sort_key(f[0], f[1], f[2][0]))
    return [(task_id, write) for _, task_id, write in found]


@names_refused_thread
class CompactSqliteSaver(BaseCheckpointSaver[Any]):
    """A SQLite checkpointer with integer versions, compressed checkpoints, one row per task's writes."""

    conn: sqlite3.Connection
    is_setup: bool
    on_commit: Callable[[], None] | None = None
    """Called after each commit (`SqliteThreads` pokes its WAL checkpointer with it)."""

    def __init__(
        self, conn: sqlite3.Connection, *, serde: SerializerProtocol | None = None
    ) -> None:
        """Use `conn`; values are serialized by `serde` (default: `StrictSerializer`)."""
        super().__init__(serde=serde or StrictSerializer())
        self.conn = conn
        self.is_setup = False
        self.lock = threading.Lock()
        self._nodes: OrderedDict[Key, Node] = OrderedDict()
        self._writes: OrderedDict[Key, TaskWrites] = OrderedDict()
        self._chunks = ChunkWriter(self.serde)
        self._deltas = DeltaWriter()

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """Return a cursor under the saver's lock (tables set up); commit at the end if `transaction`.

        A block that raises is rolled back (with `transaction`), so a call that fails midway
        (`delete_thread` after its first table) leaves nothing of itself. What the shared
        connection held uncommitted before the block is committed first: not the block's to
        roll back.
        """
        with self.lock:
            self.setup()
            if transaction and self.conn.in_transaction:
                self.conn.commit()
            cur = self.conn.cursor()
            try:
                yield cur
            except BaseException:
                if transaction:
                    self.conn.rollback()
                raise
            else:
                if transaction:
                    self.conn.commit()
                    if self.on_commit is not None:
                        self.on_commit()
            finally:
                cur.close()

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Cursor]:
        """Return a cursor under the saver's lock whose reads all see one state of the file.

        One read transaction: a prune or a write committed by another connection meanwhile
        is not seen half (a row without the parent it is stored against, its pieces or
        its writes), only after the read.
        """
        with self.lock:
            self.setup()
            cur = self.conn.cursor()
            began = not self.conn.in_transaction
            try:
                if began:
                    cur.execute("BEGIN")
                yield cur
            finally:
                if began and self.conn.in_transaction:
                    self.conn.rollback()  # it only read
                cur.close()

    @contextmanager
    def immediate(self) -> Iterator[sqlite3.Cursor]:
        """Return a cursor in one `BEGIN IMMEDIATE` transaction under the saver's lock.

        No other connection writes between its first read and its commit, so what it
        checks still holds when it writes; committed at the end, rolled back on an error.
        """
        with self.lock:
            self.setup()
            if self.conn.in_transaction:
                self.conn.commit()
            cur = self.conn.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")
                yield cur
            except BaseException:
                self.conn.rollback()
                raise
            else:
                self.conn.commit()
                if self.on_commit is not None:
                    self.on_commit()
            finally:
                cur.close()

    def setup(self) -> None:
        """Create the tables; move writes stored by the stock layout into `task_writes`."""
        if self.is_setup:
            return
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(_CHECKPOINTS)  # a stock file's table gains the columns below
        self.conn.execute(_TASK_WRITES)
        self.conn.execute(_VALUE_CHUNKS)
        for column in ("snapshots TEXT", "chunks BLOB"):
            try:
                self.conn.execute(f"ALTER TABLE checkpoints ADD COLUMN {column}")
            except sqlite3.OperationalError as exc:
                if "duplicate column name" not in str(exc):
                    raise
        if self._stock_writes_columns():
            self._adopt_stock_writes()
        self.conn.commit()
        self.is_setup = True

    def _stock_writes_columns(self) -> set[str]:
        """Return the columns of the stock layout's `writes` table (none when it has no rows)."""
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(writes)")}
        if not columns or self.conn.execute("SELECT 1 FROM writes LIMIT 1").fetchone() is None:
            return set()
        return columns

    def read_stock_writes(self) -> None:
        """On a read-only connection, read the writes the stock layout stored too.

        A writer moves them into `task_writes` when it opens the file (`setup`); a reader
        cannot, so it reads both through a temporary `task_writes` (which shadows the
        file's in every query) holding the file's rows and the stock ones.
        """
        if not self._stock_writes_columns():
            return
        self.conn.execute(_TASK_WRITES.replace("CREATE TABLE", "CREATE TEMP TABLE"))
        self.conn.execute("INSERT INTO temp.task_writes SELECT * FROM main.task_writes")
        self._adopt_stock_writes(keep=True)

    def _adopt_stock_writes(self, *, keep: bool = False) -> None:
        path = "task_path" if "task_path" in self._stock_writes_columns() else "''"
        rows = self.conn.execute(
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, {path}, idx, channel, type, "
            "value FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx"
        ).fetchall()
        grouped: dict[tuple[str, str, str, str, str], list[Write]] = {}
        for thread_id, ns, cid, task_id, path, idx, channel, type_, value in rows:
            grouped.setdefault((thread_id, ns, cid, task_id, path), []).append(
                (idx, channel, type_ or "", value or b"")
            )
        self.conn.executemany(
            "INSERT OR REPLACE INTO task_writes VALUES (?, ?, ?, ?, ?, ?)",
            [(*key, pack_writes(writes)) for key, writes in grouped.items()],
        )
        if not keep:
            self.conn.execute("DELETE FROM writes")

    def get_next_version(self, current: Any, channel: None) -> Any:
        """Return the next integer version (versions only need to increase).

        A thread the stock `SqliteSaver` started keeps stock string versions: LangGraph
        compares (and takes the maximum of) a thread's versions, and an integer next to a
        string crashed `get_new_channel_versions` with a TypeError.
        """
        if current is None:
            return 1
        if isinstance(current, int):
            return current + 1
        # The stock saver's form: a zero-padded counter, then a random tie-breaker.
        return f"{int(str(current).split('.')[0]) + 1:032}.{random.random():016}"

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint and its metadata, both compressed; large snapshots in shared pieces."""
        configurable = config["configurable"]
        thread_id, ns = str(configurable["thread_id"]), configurable["checkpoint_ns"]
        values = checkpoint["channel_values"]
        snapshots = sorted(k for k, v in values.items() if isinstance(v, DeltaSnapshot))
        chunked = {
            ch: self._chunks.split((thread_id, ns, ch), values[ch].value)
            for ch in snapshots
            if chunkable(values[ch].value)
        }
        if chunked:  # stored in `value_chunks`, referenced from the row's `chunks`
            values = {k: v for k, v in values.items() if k not in chunked}
            checkpoint = {**checkpoint, "channel_values": values}
        payload = plain_payload(self.serde, checkpoint)
        meta = dump_metadata(get_checkpoint_metadata(config, metadata))
        refs = encode_refs({ch: (c.kind, c.digests) for ch, c in chunked.items()})
        parent_id = configurable.get("checkpoint_id")
        # IMMEDIATE: the parent checked below (a delta is written against its bytes) cannot
        # be rewritten or deleted by a prune before this row is in.
        with self.immediate() as cur:
            self._nodes.pop((thread_id, ns, checkpoint["id"]), None)
            if cur.execute(
                "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id = ?",
                (thread_id, ns, checkpoint["id"]),
            ).fetchone():  # rewritten (materialised): its delta children must not need it
                keyframe_children(cur, thread_id, ns, {checkpoint["id"]})
            stored = self._deltas.encode(cur, thread_id, ns, checkpoint["id"], parent_id, payload)
            type_, blob = stored.row
            if new := [(thread_id, ns, *piece) for c in chunked.values() for piece in c.new]:
                cur.executemany("INSERT OR IGNORE INTO value_chunks VALUES (?, ?, ?, ?, ?)", new)
            cur.execute(
                f"INSERT OR REPLACE INTO checkpoints ({_ROW}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    thread_id,
                    ns,
                    checkpoint["id"],
                    parent_id,
                    type_,
                    blob,
                    meta,
                    ",".join(snapshots),
                    refs or None,
                ),
            )
        for ch, c in chunked.items():
            self._chunks.stored((thread_id, ns, ch), c)
        self._deltas.stored(thread_id, ns, stored)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes in its one row, with `SqliteSaver`'s replace/ignore rules."""
        configurable = config["configurable"]
        key = (
            str(configurable["thread_id"]),
            str(configurable["checkpoint_ns"]),
            str(configurable["checkpoint_id"]),
            task_id,
        )
        replace = all(channel in WRITES_IDX_MAP for channel, _ in writes)
        new = [
            (WRITES_IDX_MAP.get(channel, idx), channel, *self.serde.dumps_typed(value))
            for idx, (channel, value) in enumerate(writes)
        ]
        packed = pack_writes(new)
        with self.cursor() as cur:
            self._writes.pop(key[:3], None)
            cur.execute(
                "INSERT OR IGNORE INTO task_writes VALUES (?, ?, ?, ?, ?, ?)",
                (*key, task_path, packed),
            )
            if cur.rowcount == 1:
                return
            row = cur.execute(
                "SELECT data FROM task_writes WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id = ? AND task_id = ?",
                key,
            ).fetchone()
            merged = {w[0]: w for w in unpack_writes(row[0])}
            for write in new:
                if replace or write[0] not in merged:
                    merged[write[0]] = write
            cur.execute(
                "UPDATE task_writes SET data = ? WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id = ? AND task_id = ?",
                (pack_writes(sorted(merged.values(), key=lambda w: w[0])), *key),
            )

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint `config` names (or the thread's latest) with its pending writes."""
        configurable = config["configurable"]
        thread_id, ns = str(configurable["thread_id"]), configurable.get("checkpoint_ns", "")
        with self.snapshot() as cur:
            if checkpoint_id := get_checkpoint_id(config):
                cur.execute(
                    f"SELECT {_ROW} FROM checkpoints WHERE thread_id = ? AND "
                    "checkpoint_ns = ? AND checkpoint_id = ?",
                    (thread_id, ns, checkpoint_id),
                )
            else:
                cur.execute(
                    f"SELECT {_ROW} FROM checkpoints WHERE thread_id = ? AND "
                    "checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
                    (thread_id, ns),
                )
            row = cur.fetchone()
            if row is None:
                return None
            row = with_payloads(cur, [row])[0]
            stored = self._stored_writes(cur, [tuple(row[:3])])
            pieces = self._pieces(cur, [row])
        return self._tuple(row, stored.get(tuple(row[:3]), []), pieces)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """List checkpoints newest first, as `SqliteSaver.list` does."""
        yield from self._list(config, filter=filter, before=before, limit=limit, with_writes=True)

    def list_checkpoints(self, config: RunnableConfig) -> Iterator[CheckpointTuple]:
        """List a thread's checkpoints newest first, cheaper than `list`.

        Without their pending writes, and without the delta-channel snapshots stored in
        pieces (`wikireact.storage.sqlite.value_chunks`).
        """
        yield from self._list(config, with_writes=False)

    def _list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
        with_writes: bool,
    ) -> Iterator[CheckpointTuple]:
        where, params = _where(config, before)
        query = f"SELECT {_ROW} FROM checkpoints {where} ORDER BY checkpoint_id DESC"
        if limit is not None and not filter:
            query, params = query + " LIMIT ?", (*params, limit)
        stored: dict[Key, StoredWrites] = {}
        pieces: dict[bytes, tuple[str, bytes]] = {}
        with self.snapshot() as cur:
            rows = cur.execute(query, params).fetchall()
            if filter:
                rows = [row for row in rows if metadata_matches(load_metadata(row[6]), filter)]
                rows = rows[:limit]
            if rows:
                rows = with_payloads(cur, rows)
                if with_writes:
                    stored = self._stored_writes(cur, [tuple(row[:3]) for row in rows])
                    pieces = self._pieces(cur, rows)
        tuples = [
            self._tuple(row, stored.get(tuple(row[:3]), []), pieces if with_writes else None)
            for row in rows
        ]
        with self.lock:
            for row, item in zip(rows, tuples, strict=True):
                snapshots = row[7]
                self._remember(
                    tuple(row[:3]),
                    row[3],
                    snapshots.split(",")
                    if snapshots is not None
                    else item.checkpoint["channel_values"],
                )
        yield from tuples

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints, writes and snapshot pieces."""
        with self.cursor() as cur:
            self._nodes.clear()
            self._writes.clear()
            self._chunks.forget(str(thread_id))
            self._deltas.forget({str(thread_id)})
            for table in _THREAD_TABLES:
                cur.execute(f"DELETE FROM {table} WHERE thread_id = ?", (str(thread_id),))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's every checkpoint, write and snapshot piece to another thread id.

        The whole parent chain is copied, so the target rebuilds its delta channels as the
        source does. A target that already has rows (e.g. copied once, then pruned) is
        refused, changing nothing: merging two chains under one id would mix them
        (LangGraph's conformance suite only copies to new thread ids).
        """
        source, target = str(source_thread_id), str(target_thread_id)
        with self.immediate() as cur:
            if any(
                cur.execute(
                    f"SELECT 1 FROM {table} WHERE thread_id = ? LIMIT 1", (target,)
                ).fetchone()
                for table in _THREAD_TABLES
            ):
                raise ThreadsError(
                    f"cannot copy thread {source!r} to {target!r}: thread {target!r} already "
                    "has checkpoints; delete it first or pick another thread id"
                )
            for table in _THREAD_TABLES:
                columns = [row[1] for row in cur.execute(f"PRAGMA table_info({table})")]
                others = ", ".join(c for c in columns if c != "thread_id")
                cur.execute(
                    f"INSERT OR IGNORE INTO {table} (thread_id, {others}) "
                    f"SELECT ?, {others} FROM {table} WHERE thread_id = ?",
                    (target, source),
                )

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        channels: Specs | None = None,
    ) -> None:
        """Keep each thread's latest checkpoint per namespace, its delta channels written whole.

        `"delete"` removes the threads. `channels` (the graph's) rebuild delta channel
        values; without them a thread whose latest checkpoint needs one is refused
        (`wikireact.storage.sqlite.prune`).
        """
        pruning.prune(self, thread_ids, strategy, channels)

    def delete_for_runs(self, run_ids: Sequence[str], *, channels: Specs | None = None) -> None:
        """Delete these runs' checkpoints and writes; the checkpoints they leave are materialised."""
        pruning.delete_for_runs(self, run_ids, channels)

    def forget(self, thread_ids: Iterable[str]) -> None:
        """Drop what the caches hold of these threads (their rows changed); call under the lock."""
        self._nodes.clear()
        self._writes.clear()
        names = {str(t) for t in thread_ids}
        for thread_id in names:
            self._chunks.forget(thread_id)
        self._deltas.forget(names)

    def keyframe_children(
        self, cur: Any, thread_id: str, ns: str, parents: Collection[str], skip: Collection[str]
    ) -> None:
        """Store whole the checkpoints stored against a parent in `parents` (about to go)."""
        keyframe_children(cur, thread_id, ns, parents, skip)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Return each channel's seed and writes along the target's ancestors (oldest first).

        Walks parents from the target (excluded) until every channel has reached a checkpoint
        holding its value (its seed), as `SqliteSaver` does, through the ancestry cache.
        """
        if not channels:
            return {}
        configurable = config["configurable"]
        thread_id, ns = str(configurable["thread_id"]), configurable.get("checkpoint_ns", "")
        target = get_checkpoint_id(config)
        if not target:
            latest = self.get_tuple(config)
            if latest is None:
                return {ch: {"writes": []} for ch in channels}
            target = latest.config["configurable"]["checkpoint_id"]
        chains: dict[str, list[str]] = {ch: [] for ch in channels}
        seed_at: dict[str, str] = {}
        with self.snapshot() as cur:
            lineage = self._lineage(thread_id, ns, target)
            found = next(lineage, None)
            if found is None:
                self._gone(thread_id, target)
            # A checkpoint written whole since it was read (a prune) is its own seed.
            walked, active = {target}, set(channels) - found[1]
            seed_at |= {ch: target for ch in set(channels) & found[1]}
            for checkpoint_id, held in lineage:
                if not active or checkpoint_id in walked:
                    break
                walked.add(checkpoint_id)
                for ch in active:
                    chains[ch].append(checkpoint_id)
                for ch in active & held:
                    seed_at[ch] = checkpoint_id
                active -= held
            lineage.close()  # stops a recursive query still under way
            found_rows = [
                cur.execute(
                    f"SELECT {_COLUMNS.removesuffix(', metadata')}, chunks FROM "
                    "checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                    "AND checkpoint_id = ?",
                    (thread_id, ns, cid),
                ).fetchone()
                for cid in set(seed_at.values())
            ]
            if None in found_rows:  # the ancestry cache named a row another process deleted
                self._gone(thread_id, target)
            seed_rows = {row[2]: (row[4], row[5], row[6]) for row in with_payloads(cur, found_rows)}
            pieces = self._piece_data(
                cur,
                thread_id,
                ns,
                [
                    digest
                    for ch, cid in seed_at.items()
                    for digest in decode_refs(seed_rows[cid][2] or b"").get(ch, (0, []))[1]
                ],
            )
            wanted = {(thread_id, ns, c) for chain in chains.values() for c in chain}
            cached = {key: self._writes[key] for key in wanted if key in self._writes}
            stored = self._stored_writes(cur, sorted(wanted - cached.keys()))
        writes = {**cached, **{key: sorted_writes(rows) for key, rows in stored.items()}}
        with self.lock:
            for key in stored:
                self._writes[key] = writes[key]
            while len(self._writes) > CACHED_CHECKPOINTS:
                self._writes.popitem(last=False)
        seed_values = {
            cid: self._load_checkpoint(
                type_, blob, refs, pieces, [ch for ch in seed_at if seed_at[ch] == cid]
            )["channel_values"]
            for cid, (type_, blob, refs) in seed_rows.items()
        }
        out: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            collected: list[PendingWrite] = [
                (task_id, ch, self.serde.loads_typed((w[2], w[3])))
                for checkpoint_id in reversed(chains[ch])
                for task_id, w in writes[(thread_id, ns, checkpoint_id)]
                if w[1] == ch
            ]
            entry: DeltaChannelHistory = {"writes": collected}
            if ch in seed_at:
                entry["seed"] = seed_values[seed_at[ch]][ch]
            out[ch] = entry
        return out

    def _gone(self, thread_id: str, checkpoint_id: str) -> NoReturn:
        """Refuse to rebuild a checkpoint no longer stored; forget the thread (call under the lock)."""
        self.forget({thread_id})
        raise ThreadsError(
            f"thread {thread_id}: checkpoint {checkpoint_id} is no longer stored (pruned or "
            "deleted since it was read); read the thread again"
        )

    def _lineage(
        self, thread_id: str, ns: str, checkpoint_id: str
    ) -> Generator[tuple[str, frozenset[str]], None, None]:
        """Yield a checkpoint's id and the delta channels it holds, then each ancestor's, nearest first.

        Cached checkpoints come from the cache; from the first one missing, a recursive query
        reads the chain row by row (only as far as the caller goes on) until it meets a cached
        checkpoint again. Call with the lock held; `close()` the iterator when done.
        """
        next_id: str | None = checkpoint_id
        while next_id is not None:
            key = (thread_id, ns, next_id)
            node = self._nodes.get(key)
            if node is not None:
                yield next_id, node[1]
                next_id = node[0]
                continue
            rows = self.conn.cursor()
            try:
                rows.execute(_ANCESTORS, (thread_id, ns, next_id, thread_id, ns))
                start, next_id = next_id, None
                for found_id, parent_id, snapshots, type_, blob in rows:
                    if found_id != start and (thread_id, ns, found_id) in self._nodes:
                        next_id = found_id
                        break
                    held = (
                        snapshots.split(",")
                        if snapshots is not None
                        else self._load_checkpoint(type_, blob)["channel_values"]
                    )
                    yield found_id, self._remember((thread_id, ns, found_id), parent_id, held)[1]
            finally:
                rows.close()

    def _remember(self, key: Key, parent_id: str | None, held: Iterable[str]) -> Node:
        """Cache and return a checkpoint's parent and the channels it holds values for."""
        node = self._nodes[key] = (parent_id, frozenset(held) - {""})
        if len(self._nodes) > CACHED_CHECKPOINTS:
            self._nodes.popitem(last=False)
        return node

    def _stored_writes(self, cur: Any, keys: Sequence[Key]) -> dict[Key, StoredWrites]:
        """Return the `task_writes` rows of these checkpoints (an empty list for none)."""
        out: dict[Key, StoredWrites] = {key: [] for key in keys}
        groups: dict[tuple[str, str], list[str]] = {}
        for thread_id, ns, checkpoint_id in keys:
            groups.setdefault((thread_id, ns), []).append(checkpoint_id)
        for (thread_id, ns), ids in groups.items():
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                cur.execute(
                    "SELECT checkpoint_id, task_id, task_path, data FROM task_writes WHERE thread_id = ? "
                    f"AND checkpoint_ns = ? AND checkpoint_id IN ({','.join('?' * len(chunk))})",
                    (thread_id, ns, *chunk),
                )
                for checkpoint_id, task_id, path, data in cur.fetchall():
                    out[(thread_id, ns, checkpoint_id)].append((task_id, path, data))
        return out

    def _pieces(self, cur: Any, rows: Sequence[Sequence[Any]]) -> dict[bytes, tuple[str, bytes]]:
        """Return the stored pieces of every snapshot the rows (`_ROW`) hold in pieces."""
        wanted: dict[tuple[str, str], list[bytes]] = {}
        for row in rows:
            for _, digests in decode_refs(row[8] or b"").values():
                wanted.setdefault((row[0], row[1]), []).extend(digests)
        out: dict[bytes, tuple[str, bytes]] = {}
        for (thread_id, ns), digests in wanted.items():
            out |= self._piece_data(cur, thread_id, ns, digests)
        return out

    def _piece_data(
        self, cur: Any, thread_id: str, ns: str, digests: Iterable[bytes]
    ) -> dict[bytes, tuple[str, bytes]]:
        """Return the (type, data) of these pieces of a thread's snapshots, by digest."""
        unique = sorted(set(digests))
        out: dict[bytes, tuple[str, bytes]] = {}
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            cur.execute(
                "SELECT digest, type, data FROM value_chunks WHERE thread_id = ? AND "
                f"checkpoint_ns = ? AND digest IN ({','.join('?' * len(chunk))})",
                (thread_id, ns, *chunk),
            )
            out |= {digest: (type_, data) for digest, type_, data in cur.fetchall()}
        return out

    def _load_checkpoint(
        self,
        type_: str,
        blob: bytes,
        refs: bytes | None = None,
        pieces: Mapping[bytes, tuple[str, bytes]] | None = None,
        channels: Iterable[str] | None = None,
    ) -> Checkpoint:
        """Decode a checkpoint blob, with the snapshots stored in pieces when given `pieces`.

        Those of `channels` (default: all) that `refs` (the row's `chunks`) lists.
        """
        if type_.endswith(ZD1):
            type_, blob = type_.removesuffix(ZD1), unsqueeze(blob)
        checkpoint = cast(Checkpoint, self.serde.loads_typed((type_, blob)))
        if refs and pieces is not None:
            chunked = decode_refs(refs)
            for ch in chunked.keys() if channels is None else channels:
                if ch in chunked:
                    kind, digests = chunked[ch]
                    value = assemble(kind, [self.serde.loads_typed(pieces[d]) for d in digests])
                    checkpoint["channel_values"][ch] = DeltaSnapshot(value)
        return checkpoint

    def _tuple(
        self,
        row: Sequence[Any],
        stored: StoredWrites,
        pieces: Mapping[bytes, tuple[str, bytes]] | None,
    ) -> CheckpointTuple:
        """Decode a row (`_ROW`); `pieces` None leaves out the snapshots stored in pieces."""
        thread_id, ns, checkpoint_id, parent_id, type_, blob, metadata, _, refs = row
        return CheckpointTuple(
            {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": checkpoint_id,
                }
            },
            self._load_checkpoint(type_, blob, refs, pieces),
            load_metadata(metadata),
            {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": parent_id,
                }
            }
            if parent_id
            else None,
            [
                (task_id, w[1], self.serde.loads_typed((w[2], w[3])))
                for task_id, w in sorted_writes(stored)
            ],
        )
