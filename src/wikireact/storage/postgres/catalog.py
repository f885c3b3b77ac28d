"""A PostgreSQL store's threads, totals and VACUUM (`wikireact.storage.catalog`)."""

from __future__ import annotations

from wikireact.storage.postgres import layout
from wikireact.storage.postgres.threads import PostgresThreads
from wikireact.storage.thread_info import (
    Latest,
    Sizes,
    StoreStats,
    ThreadInfo,
    build_infos,
    timestamp,
)

TABLES = (*layout.TABLES, "wikireact_threads")
_SIZES = (  # every stored column: the packed layout's `packed` too (NULL in a stock row)
    "SELECT thread_id, count(*) AS n, sum(coalesce(pg_column_size(checkpoint), 0) "
    "+ coalesce(pg_column_size(metadata), 0) + coalesce(pg_column_size(packed), 0)) AS size "
    "FROM checkpoints GROUP BY thread_id",
    "SELECT thread_id, 0 AS n, sum(pg_column_size(blob)) AS size FROM checkpoint_blobs "
    "GROUP BY thread_id",
    "SELECT thread_id, 0 AS n, sum(pg_column_size(blob)) AS size FROM checkpoint_writes "
    "GROUP BY thread_id",
    f"SELECT thread_id, 0 AS n, sum(pg_column_size(data)) AS size FROM {layout.TASK_WRITES} "
    "GROUP BY thread_id",
    f"SELECT thread_id, 0 AS n, sum(pg_column_size(data)) AS size FROM {layout.PIECES} "
    "GROUP BY thread_id",
)
_LATEST = """
SELECT DISTINCT ON (thread_id) thread_id, checkpoint ->> 'ts' AS ts,
    checkpoint -> 'channel_values' ->> 'status' AS status,
    checkpoint -> 'channel_values' ->> 'steps' AS steps
FROM checkpoints WHERE checkpoint_ns = '' ORDER BY thread_id, checkpoint_id DESC
"""


def list_threads(store: PostgresThreads) -> list[ThreadInfo]:
    """Return every thread of the database, by thread id."""
    with store.pool.connection() as conn:
        registry = {
            row["thread_id"]: (row["question"], row["settings"], row["created"])
            for row in conn.execute(
                "SELECT thread_id, question, settings, created FROM wikireact_threads"
            )
        }
        sizes: dict[str, Sizes] = {}
        for query in _SIZES:
            for row in conn.execute(query):
                entry = sizes.setdefault(row["thread_id"], Sizes())
                entry.checkpoints += row["n"]
                entry.bytes += row["size"] or 0
        latest = {
            row["thread_id"]: Latest(
                status=row["status"] or "-",
                steps=int(row["steps"] or 0),
                updated=timestamp(row["ts"]),
            )
            for row in conn.execute(_LATEST)
        }
    return build_infos(registry, sizes, latest)


def store_stats(store: PostgresThreads) -> StoreStats:
    """Return the database's thread and checkpoint counts and its bytes by table."""
    with store.pool.connection() as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM (SELECT thread_id FROM checkpoints UNION "
            "SELECT thread_id FROM wikireact_threads) t) AS threads, "
            "(SELECT count(*) FROM checkpoints) AS checkpoints, "
            "pg_database_size(current_database()) AS total"
        ).fetchone()
        assert row is not None
        tables = {
            name: int(
                conn.execute("SELECT pg_total_relation_size(%s) AS size", (name,)).fetchone()[  # type: ignore[index]
                    "size"
                ]
            )
            for name in TABLES
        }
    return StoreStats(
        row["threads"],
        row["checkpoints"],
        dict(sorted(tables.items(), key=lambda t: -t[1])),
        row["total"],
    )


def store_bytes(store: PostgresThreads) -> int:
    """Return the database's size on disk."""
    with store.pool.connection() as conn:
        row = conn.execute("SELECT pg_database_size(current_database()) AS size").fetchone()
    return int(row["size"]) if row else 0


def vacuum(store: PostgresThreads, *, full: bool = False) -> None:
    """VACUUM the store's tables (FULL: rewrite them, giving the space back to the disk)."""
    with store.pool.connection() as conn:
        for name in TABLES:
            conn.execute(f"VACUUM {'FULL ' if full else ''}{name}")


def unregister(store: PostgresThreads, thread_id: str) -> None:
    """Delete a thread's registry row."""
    with store.pool.connection() as conn:
        conn.execute("DELETE FROM wikireact_threads WHERE thread_id = %s", (thread_id,))
