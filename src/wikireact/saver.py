"""wikireact's SQLite checkpointer: LangGraph's `SqliteSaver` with compact rows.

Per superstep LangGraph saves one checkpoint and, per task, a handful of channel writes.
On a realistic episode the bookkeeping outweighed the content (bench/checkpoint_growth.py),
so `CompactSqliteSaver` keeps the stock `checkpoints` table and its queries but:

- writes channel versions as integers, not ~50-character strings;
- zlib-compresses each checkpoint blob against `ZDICT`, a preset dictionary of the names
  that every checkpoint repeats (channels, nodes, fields), and its metadata JSON likewise
  (`list(filter=...)` then matches metadata in Python instead of with SQL's json_extract);
- stores each task's writes as ONE row of `task_writes` (their packed, compressed values)
  instead of one `writes` row per channel, each repeating thread, checkpoint and task ids;
- records in `checkpoints.snapshots` which delta channels a checkpoint holds a snapshot of,
  so rebuilding a delta channel walks ancestors without decoding each of them, and caches
  that ancestry and the ancestors' writes (a checkpoint with a child never changes).

Threads written by the stock layout are moved to `task_writes` when a file is opened. Reads
(`get_tuple`, `list`, `get_delta_channel_history`) return what `SqliteSaver` would.
`CompressingSerializer` is the value serializer used with it.
"""

from __future__ import annotations

import json
import sqlite3
import struct
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import (
    _DeltaSnapshot,  # DeltaChannel's stored value (beta API)
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.utils import search_where

COMPRESS_OVER = 1024
"""Values larger than this are zlib-compressed by `CompressingSerializer` (page text ~4x)."""
SQUEEZE_OVER = 48
"""Checkpoint blobs and packed writes larger than this are compressed against `ZDICT`."""

_NAMES = (
    "msgpack null bytes json ~__pregel_pull, ~__pregel_push, __pregel_tasks __interrupt__ "
    "__error__ __resume__ __scheduled__ __start__ __input__ __end__ branch:to: "
    "wiki_requests input_tokens output_tokens format_error action_text state_key repeat_of "
    "executed invalid repeat finish rejected raw kind thought action observation name argument "
    "Search Lookup Finish Thought: Action: (Result  / No more results. "
    "question answer status steps page_title page_sentences lookup_cursors page_key proposals "
    "current trajectory usage running finished budget_exhausted repetition_halted "
    "reason parse act observe v ts id channel_values channel_versions versions_seen "
    "updated_channels branch:to:reason branch:to:parse branch:to:act branch:to:observe"
).split(" ")
ZDICT = b"".join(bytes([0xA0 | min(len(n), 31)]) + n.encode()[:31] for n in _NAMES)
"""zlib preset dictionary: msgpack-encoded names. FROZEN: stored blobs depend on its bytes;
to change it, add a new tag next to `_ZD1` and keep this one readable."""
_ZD1 = "+zd1"
_RAW_WRITES, _ZD1_WRITES = b"\x00", b"\x01"
_WRITE_HEAD = struct.Struct("<iHHI")

_TASK_WRITES = """
CREATE TABLE IF NOT EXISTS task_writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    data BLOB NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id)
)
"""
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

Write = tuple[int, str, str, bytes]
"""A stored write: index in its task, channel, serialized type tag, serialized value."""
TaskWrites = list[tuple[str, Write]]
"""A checkpoint's writes with their task ids, in `writes_sort_key` order."""
Node = tuple[str | None, frozenset[str]]
"""A checkpoint's parent id and the delta channels it holds a value (snapshot) for."""
CACHED_CHECKPOINTS = 4096
"""Checkpoints whose ancestry and writes a saver keeps decoded (per cache)."""


def squeeze(data: bytes) -> bytes | None:
    """Compress `data` against `ZDICT`; None when that does not make it smaller."""
    if len(data) <= SQUEEZE_OVER:
        return None
    packer = zlib.compressobj(6, zdict=ZDICT)
    packed = packer.compress(data) + packer.flush()
    return packed if len(packed) < len(data) else None


def unsqueeze(data: bytes) -> bytes:
    """Undo `squeeze`."""
    unpacker = zlib.decompressobj(zdict=ZDICT)
    return unpacker.decompress(data) + unpacker.flush()


def pack_writes(writes: Iterable[Write]) -> bytes:
    """Serialize one task's writes into one blob (compressed when that helps)."""
    parts = []
    for idx, channel, type_, value in writes:
        name, kind = channel.encode(), type_.encode()
        parts.append(_WRITE_HEAD.pack(idx, len(name), len(kind), len(value)) + name + kind + value)
    raw = b"".join(parts)
    squeezed = squeeze(raw)
    return _RAW_WRITES + raw if squeezed is None else _ZD1_WRITES + squeezed


def unpack_writes(blob: bytes) -> list[Write]:
    """Return the writes packed by `pack_writes`, in stored order."""
    raw = unsqueeze(blob[1:]) if blob[:1] == _ZD1_WRITES else blob[1:]
    out, at, head = [], 0, _WRITE_HEAD.size
    while at < len(raw):
        idx, name_len, kind_len, value_len = _WRITE_HEAD.unpack_from(raw, at)
        at += head
        channel = raw[at:at + name_len].decode()
        at += name_len
        type_ = raw[at:at + kind_len].decode()
        at += kind_len
        out.append((idx, channel, type_, raw[at:at + value_len]))
        at += value_len
    return out


def load_metadata(stored: bytes | str | None) -> CheckpointMetadata:
    """Return a checkpoint's metadata: plain JSON (stock rows) or squeezed JSON."""
    if stored is None:
        return cast(CheckpointMetadata, {})
    if isinstance(stored, bytes) and stored[:1] != b"{":
        stored = unsqueeze(stored)
    return cast(CheckpointMetadata, json.loads(stored))


def metadata_matches(metadata: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether every `key: value` of `wanted` is in `metadata` (dotted keys reach nested values)."""
    for key, value in wanted.items():
        found: Any = metadata
        for part in key.split("."):
            found = found.get(part) if isinstance(found, Mapping) else None
        if found != value:
            return False
    return True


class CompressingSerializer(JsonPlusSerializer):
    """LangGraph's serializer, with zlib on values over 1 KiB (page text shrinks ~4x)."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize, compressing large payloads and tagging their type."""
        kind, data = super().dumps_typed(obj)
        if len(data) > COMPRESS_OVER:
            return f"{kind}+zlib", zlib.compress(data, 1)
        return kind, data

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize, decompressing tagged payloads."""
        kind, payload = data
        if kind.endswith("+zlib"):
            return super().loads_typed((kind.removesuffix("+zlib"), zlib.decompress(payload)))
        return super().loads_typed(data)


class CompactSqliteSaver(SqliteSaver):
    """`SqliteSaver` with integer versions, compressed checkpoints and one row per task's writes."""

    def __init__(self, conn: sqlite3.Connection, *, serde: SerializerProtocol | None = None) -> None:
        """Use `conn`; values are serialized by `serde` (default: LangGraph's)."""
        super().__init__(conn, serde=serde)
        self._nodes: OrderedDict[tuple[str, str, str], Node] = OrderedDict()
        self._writes: OrderedDict[tuple[str, str, str], TaskWrites] = OrderedDict()

    def setup(self) -> None:
        """Create the tables; move writes stored by the stock layout into `task_writes`."""
        if self.is_setup:
            return
        super().setup()
        self.conn.execute(_TASK_WRITES)
        try:
            self.conn.execute("ALTER TABLE checkpoints ADD COLUMN snapshots TEXT")
        except sqlite3.OperationalError as exc:
            if "duplicate column name" not in str(exc):
                raise
        if self.conn.execute("SELECT 1 FROM writes LIMIT 1").fetchone() is not None:
            self._adopt_stock_writes()
        self.conn.commit()

    def _adopt_stock_writes(self) -> None:
        rows = self.conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
            "value FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx"
        ).fetchall()
        grouped: dict[tuple[str, str, str, str, str], list[Write]] = {}
        for thread_id, ns, cid, task_id, path, idx, channel, type_, value in rows:
            grouped.setdefault((thread_id, ns, cid, task_id, path), []).append(
                (idx, channel, type_ or "", value or b""))
        self.conn.executemany(
            "INSERT OR REPLACE INTO task_writes VALUES (?, ?, ?, ?, ?, ?)",
            [(*key, pack_writes(writes)) for key, writes in grouped.items()],
        )
        self.conn.execute("DELETE FROM writes")

    def get_next_version(self, current: Any, channel: None) -> int:  # type: ignore[override]
        """Return the next integer version (versions only need to increase)."""
        if current is None:
            return 1
        if isinstance(current, int):
            return current + 1
        return int(str(current).split(".")[0]) + 1  # a thread written by the stock saver

    def _load_checkpoint(self, type_: str, blob: bytes) -> Checkpoint:
        if type_.endswith(_ZD1):
            return cast(Checkpoint, self.serde.loads_typed((type_.removesuffix(_ZD1), unsqueeze(blob))))
        return cast(Checkpoint, self.serde.loads_typed((type_, blob)))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint and its metadata, both compressed."""
        configurable = config["configurable"]
        thread_id, ns = str(configurable["thread_id"]), configurable["checkpoint_ns"]
        type_, blob = self.serde.dumps_typed(checkpoint)
        if (squeezed := squeeze(blob)) is not None:
            type_, blob = type_ + _ZD1, squeezed
        meta = json.dumps(get_checkpoint_metadata(config, metadata), ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8", "ignore")
        meta = squeeze(meta) or meta
        snapshots = ",".join(sorted(k for k, v in checkpoint["channel_values"].items()
                                    if isinstance(v, _DeltaSnapshot)))
        with self.cursor() as cur:
            self._nodes.pop((thread_id, ns, checkpoint["id"]), None)
            cur.execute(
                "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
                "parent_checkpoint_id, type, checkpoint, metadata, snapshots) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (thread_id, ns, checkpoint["id"], configurable.get("checkpoint_id"), type_, blob, meta,
                 snapshots),
            )
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                 "checkpoint_id": checkpoint["id"]}}

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes in its one row, with `SqliteSaver`'s replace/ignore rules."""
        configurable = config["configurable"]
        key = (str(configurable["thread_id"]), str(configurable["checkpoint_ns"]),
               str(configurable["checkpoint_id"]), task_id)
        replace = all(channel in WRITES_IDX_MAP for channel, _ in writes)
        new = [(WRITES_IDX_MAP.get(channel, idx), channel, *self.serde.dumps_typed(value))
               for idx, (channel, value) in enumerate(writes)]
        with self.cursor() as cur:
            self._writes.pop(key[:3], None)
            cur.execute("INSERT OR IGNORE INTO task_writes VALUES (?, ?, ?, ?, ?, ?)",
                        (*key, task_path, pack_writes(new)))
            if cur.rowcount == 1:
                return
            row = cur.execute(
                "SELECT data FROM task_writes WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id = ? AND task_id = ?", key).fetchone()
            merged = {w[0]: w for w in unpack_writes(row[0])}
            for write in new:
                if replace or write[0] not in merged:
                    merged[write[0]] = write
            cur.execute(
                "UPDATE task_writes SET data = ? WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id = ? AND task_id = ?",
                (pack_writes(sorted(merged.values(), key=lambda w: w[0])), *key))

    def _pending_writes(self, cur: Any, thread_id: str, ns: str, checkpoint_id: str) -> list[PendingWrite]:
        cur.execute(
            "SELECT task_id, task_path, data FROM task_writes WHERE thread_id = ? "
            "AND checkpoint_ns = ? AND checkpoint_id = ?", (thread_id, ns, checkpoint_id))
        found = [(path, task_id, write) for task_id, path, data in cur.fetchall()
                 for write in unpack_writes(data)]
        found.sort(key=lambda f: writes_sort_key(f[0], f[1], f[2][0]))
        return [(task_id, w[1], self.serde.loads_typed((w[2], w[3]))) for _, task_id, w in found]

    def _tuple(self, cur: Any, row: Sequence[Any], with_writes: bool = True) -> CheckpointTuple:
        thread_id, ns, checkpoint_id, parent_id, type_, blob, metadata = row
        checkpoint = self._load_checkpoint(type_, blob)
        self._remember((thread_id, ns, checkpoint_id), parent_id, checkpoint["channel_values"])
        return CheckpointTuple(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                              "checkpoint_id": checkpoint_id}},
            checkpoint,
            load_metadata(metadata),
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                              "checkpoint_id": parent_id}} if parent_id else None,
            self._pending_writes(cur, thread_id, ns, checkpoint_id) if with_writes else [],
        )

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint `config` names (or the thread's latest) with its pending writes."""
        configurable = config["configurable"]
        thread_id, ns = str(configurable["thread_id"]), configurable.get("checkpoint_ns", "")
        columns = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
        with self.cursor(transaction=False) as cur:
            if checkpoint_id := get_checkpoint_id(config):
                cur.execute(f"SELECT {columns} FROM checkpoints WHERE thread_id = ? AND "
                            "checkpoint_ns = ? AND checkpoint_id = ?", (thread_id, ns, checkpoint_id))
            else:
                cur.execute(f"SELECT {columns} FROM checkpoints WHERE thread_id = ? AND "
                            "checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1", (thread_id, ns))
            row = cur.fetchone()
            return None if row is None else self._tuple(cur, row)

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
        """List a thread's checkpoints newest first, without their pending writes (cheaper)."""
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
        where, params = search_where(config, None, before)
        query = ("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
                 f"checkpoint, metadata FROM checkpoints {where} ORDER BY checkpoint_id DESC")
        if limit is not None and not filter:
            query, params = query + " LIMIT ?", (*params, limit)
        with self.cursor(transaction=False) as cur:
            rows = cur.execute(query, params).fetchall()
            if filter:
                rows = [row for row in rows if metadata_matches(load_metadata(row[6]), filter)][:limit]
            for row in rows:
                yield self._tuple(cur, row, with_writes)

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints and writes."""
        super().delete_thread(thread_id)
        with self.cursor() as cur:
            self._nodes.clear()
            self._writes.clear()
            cur.execute("DELETE FROM task_writes WHERE thread_id = ?", (str(thread_id),))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Return each channel's seed and writes along the target's ancestors (oldest first).

        Walks parents from the target (excluded) until every channel has reached a checkpoint
        holding its value (its seed). Ancestors (their parent and which values they hold) and
        their writes are cached: a checkpoint with a child never changes, and listing a
        thread's history walks the same ancestors once per checkpoint.
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
        with self.cursor(transaction=False) as cur:
            node = self._ancestor(cur, thread_id, ns, target)
            walked, active = {target}, set(channels) if node is not None else set()
            while node is not None and active and node[0] is not None and node[0] not in walked:
                checkpoint_id = node[0]
                walked.add(checkpoint_id)
                node = self._ancestor(cur, thread_id, ns, checkpoint_id)
                if node is None:
                    break
                for ch in active:
                    chains[ch].append(checkpoint_id)
                for ch in active & node[1]:
                    seed_at[ch] = checkpoint_id
                active -= node[1]
            seeds = self._seeds(cur, thread_id, ns, seed_at)
            writes = self._ancestor_writes(cur, thread_id, ns, {c for chain in chains.values() for c in chain})
        out: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            collected: list[PendingWrite] = [
                (task_id, ch, self.serde.loads_typed((w[2], w[3])))
                for checkpoint_id in reversed(chains[ch])
                for task_id, w in writes.get(checkpoint_id, ())
                if w[1] == ch
            ]
            entry: DeltaChannelHistory = {"writes": collected}
            if ch in seeds:
                entry["seed"] = seeds[ch]
            out[ch] = entry
        return out

    def _remember(self, key: tuple[str, str, str], parent_id: str | None, held: Iterable[str]) -> Node:
        """Cache and return a checkpoint's parent and the channels it holds values for."""
        node = self._nodes[key] = (parent_id, frozenset(held) - {""})
        if len(self._nodes) > CACHED_CHECKPOINTS:
            self._nodes.popitem(last=False)
        return node

    def _ancestor(self, cur: Any, thread_id: str, ns: str, checkpoint_id: str) -> Node | None:
        """Return (parent id, channels with values) of a checkpoint; None if it is unknown.

        On a cache miss, reads the checkpoint and its ancestors in one recursive query,
        stopping at the first one already cached.
        """
        key = (thread_id, ns, checkpoint_id)
        node = self._nodes.get(key)
        if node is None:
            rows = self.conn.cursor()
            rows.execute(_ANCESTORS, (thread_id, ns, checkpoint_id, thread_id, ns))
            for found_id, parent_id, snapshots, type_, blob in rows:
                found = (thread_id, ns, found_id)
                if found != key and found in self._nodes:
                    break
                held = snapshots.split(",") if snapshots is not None else \
                    self._load_checkpoint(type_, blob)["channel_values"]
                remembered = self._remember(found, parent_id, held)
                node = remembered if found == key else node
            rows.close()  # stops the recursive query early
        return node

    def _seeds(self, cur: Any, thread_id: str, ns: str, seed_at: dict[str, str]) -> dict[str, Any]:
        """Return each channel's value stored in the checkpoint named for it."""
        seeds: dict[str, Any] = {}
        for checkpoint_id in set(seed_at.values()):
            type_, blob = cur.execute(
                "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id = ?", (thread_id, ns, checkpoint_id)).fetchone()
            values = self._load_checkpoint(type_, blob)["channel_values"]
            seeds.update({ch: values[ch] for ch, at in seed_at.items() if at == checkpoint_id})
        return seeds

    def _ancestor_writes(
        self, cur: Any, thread_id: str, ns: str, checkpoint_ids: set[str]
    ) -> dict[str, TaskWrites]:
        """Return the writes of these checkpoints (ancestors: final), each in `writes_sort_key` order."""
        out = {c: self._writes[(thread_id, ns, c)] for c in checkpoint_ids if (thread_id, ns, c) in self._writes}
        missing = sorted(checkpoint_ids - out.keys())
        found: dict[str, list[tuple[str, str, Write]]] = {c: [] for c in missing}
        for start in range(0, len(missing), 500):
            chunk = missing[start:start + 500]
            cur.execute(
                "SELECT checkpoint_id, task_id, task_path, data FROM task_writes WHERE thread_id = ? "
                f"AND checkpoint_ns = ? AND checkpoint_id IN ({','.join('?' * len(chunk))})",
                (thread_id, ns, *chunk))
            for checkpoint_id, task_id, path, data in cur.fetchall():
                found[checkpoint_id].extend((path, task_id, write) for write in unpack_writes(data))
        for checkpoint_id, items in found.items():
            items.sort(key=lambda f: writes_sort_key(f[0], f[1], f[2][0]))
            out[checkpoint_id] = self._writes[(thread_id, ns, checkpoint_id)] = [
                (task_id, write) for _, task_id, write in items]
        while len(self._writes) > CACHED_CHECKPOINTS:
            self._writes.popitem(last=False)
        return out
