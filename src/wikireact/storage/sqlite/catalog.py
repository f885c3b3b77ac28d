"""A SQLite checkpoint file's threads, totals and VACUUM (`wikireact.storage.catalog`)."""

from __future__ import annotations

from wikireact.storage.sqlite.parent_deltas import with_payloads
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.storage.thread_info import (
    Latest,
    Sizes,
    StoreStats,
    ThreadInfo,
    build_infos,
    timestamp,
)

_SIZES = (
    "SELECT thread_id, count(*), sum(length(checkpoint) + ifnull(length(metadata), 0) "
    "+ ifnull(length(chunks), 0)) FROM checkpoints GROUP BY thread_id",
    "SELECT thread_id, 0, sum(length(data)) FROM task_writes GROUP BY thread_id",
    "SELECT thread_id, 0, sum(length(data)) FROM value_chunks GROUP BY thread_id",
)
_LATEST = (
    "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, "
    "c.checkpoint FROM checkpoints c JOIN ("
    "SELECT thread_id, max(checkpoint_id) AS head FROM checkpoints WHERE checkpoint_ns = '' "
    "GROUP BY thread_id) h ON c.thread_id = h.thread_id AND c.checkpoint_ns = '' "
    "AND c.checkpoint_id = h.head"
)


def list_threads(store: SqliteThreads) -> list[ThreadInfo]:
    """Return every thread of the file, by thread id."""
    saver = store.saver
    with saver.snapshot() as cur:  # one state: a head's parent is not pruned between reads
        registry = {
            row[0]: (row[1], row[2], row[3])
            for row in cur.execute(
                "SELECT thread_id, question, settings, created FROM wikireact_threads"
            )
        }
        tables = {row[0] for row in cur.execute("SELECT name FROM sqlite_master")}
        sizes: dict[str, Sizes] = {}
        for query in _SIZES:
            if query.split(" FROM ")[1].split()[0] not in tables:
                continue  # a file of an older layout, opened read-only
            for thread_id, count, size in cur.execute(query):
                entry = sizes.setdefault(thread_id, Sizes())
                entry.checkpoints += count
                entry.bytes += size or 0
        heads = with_payloads(cur, cur.execute(_LATEST).fetchall())
    latest = {}
    for thread_id, _, _, _, type_, blob in heads:
        checkpoint = saver._load_checkpoint(type_, blob)
        values = checkpoint["channel_values"]
        latest[thread_id] = Latest(
            status=str(values.get("status") or "-"),
            steps=int(values.get("steps") or 0),
            updated=timestamp(checkpoint.get("ts")),
        )
    return build_infos(registry, sizes, latest)


def store_bytes(store: SqliteThreads) -> int:
    """Return the bytes of the file and its write-ahead log."""
    wal = store.path.with_name(store.path.name + "-wal")
    return sum(p.stat().st_size for p in (store.path, wal) if p.exists())


def store_stats(store: SqliteThreads) -> StoreStats:
    """Return the file's thread and checkpoint counts and its bytes by table (`dbstat`)."""
    with store.saver.snapshot() as cur:
        threads = cur.execute(
            "SELECT count(*) FROM (SELECT thread_id FROM checkpoints UNION "
            "SELECT thread_id FROM wikireact_threads)"
        ).fetchone()[0]
        checkpoints = cur.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        tables = dict(
            cur.execute(
                "SELECT name, sum(pgsize) FROM dbstat WHERE name NOT LIKE 'sqlite_%' "
                "GROUP BY name ORDER BY 2 DESC"
            ).fetchall()
        )
    return StoreStats(threads, checkpoints, tables, store_bytes(store))


def vacuum(store: SqliteThreads, *, full: bool = False) -> None:
    """Rebuild the file without its free pages, then fold and truncate the log."""
    with store.saver.lock:
        store.conn.commit()
        store.conn.execute("VACUUM")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def unregister(store: SqliteThreads, thread_id: str) -> None:
    """Delete a thread's registry row."""
    with store.saver.cursor() as cur:
        cur.execute("DELETE FROM wikireact_threads WHERE thread_id = ?", (thread_id,))
