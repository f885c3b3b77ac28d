"""What a thread store holds, thread by thread: the rows `wikireact threads list` prints.

One `ThreadInfo` (`wikireact.storage.thread_info`) per thread that has a registry row or
checkpoints, read with a few grouped queries per store (`wikireact.storage.sqlite.catalog`,
`wikireact.storage.postgres.catalog`), never by replaying threads: status, steps and time
come from each thread's latest root checkpoint, bytes from its rows' stored sizes.
"""

from __future__ import annotations

from typing import Any

from wikireact.storage.thread_info import StoreStats, ThreadInfo
from wikireact.storage.threads import Threads

__all__ = [
    "StoreStats",
    "ThreadInfo",
    "list_threads",
    "store_bytes",
    "store_stats",
    "unregister",
    "vacuum",
]


def list_threads(store: Threads) -> list[ThreadInfo]:
    """Return every thread of `store` (SQLite or PostgreSQL), by thread id."""
    return _backend(store).list_threads(store)


def store_stats(store: Threads) -> StoreStats:
    """Return `store`'s thread and checkpoint counts and its bytes by table."""
    return _backend(store).store_stats(store)


def vacuum(store: Threads, *, full: bool = False) -> None:
    """Give freed space back (SQLite: VACUUM; PostgreSQL: VACUUM, or VACUUM FULL if `full`)."""
    _backend(store).vacuum(store, full=full)


def unregister(store: Threads, thread_id: str) -> None:
    """Delete a thread's registry row."""
    _backend(store).unregister(store, thread_id)


def _backend(store: Threads) -> Any:
    from wikireact.storage.sqlite.threads import SqliteThreads

    if isinstance(store, SqliteThreads):
        from wikireact.storage.sqlite import catalog as sqlite_catalog

        return sqlite_catalog
    from wikireact.storage.postgres import catalog as postgres_catalog

    return postgres_catalog


def store_bytes(store: Threads) -> int:
    """Return the store's size on disk (the SQLite file with its log, or the database)."""
    return int(_backend(store).store_bytes(store))
