"""LangGraph's long-term memory (`BaseStore`) in the same database as the threads (`--db`).

A SQLite file gets LangGraph's `SqliteStore` tables beside the checkpoints (on its own
connection); a PostgreSQL URL gets `PostgresStore` on the threads' connection pool. The
database is opened as a thread database first (`open_threads`), so a store is only ever
added to a file that is new or already wikireact's, and the file stays one that `--db`
accepts. Agents that remember between runs (Reflexion's lessons) read and write it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from langgraph.store.base import BaseStore
from langgraph.store.sqlite import SqliteStore

from wikireact.errors import ThreadsError
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.storage.threads import Threads, database_errors, open_threads


def store_of(threads: Threads) -> BaseStore:
    """Return a long-term store in `threads`' database, its tables set up (SQLite or PostgreSQL).

    The store shares `threads`' PostgreSQL pool; close it before `threads`. Raises
    `ThreadsError` (one line) when the database refuses the tables.
    """
    try:
        if isinstance(threads, SqliteThreads):
            conn = sqlite3.connect(
                threads.path, check_same_thread=False, timeout=30, isolation_level=None
            )
            conn.execute("PRAGMA busy_timeout=30000")
            sqlite_store = SqliteStore(conn)
            with threads.setup_lock():  # its migrations are not safe to run twice at once
                sqlite_store.setup()
            return sqlite_store
        from langgraph.store.postgres import PostgresStore

        from wikireact.storage.postgres.threads import PostgresThreads

        if not isinstance(threads, PostgresThreads):
            raise ThreadsError(f"no long-term store for {type(threads).__name__}")
        postgres_store = PostgresStore(threads.pool)
        with threads.setup_lock():  # schema changes one process at a time
            postgres_store.setup()
        return postgres_store
    except database_errors() as exc:
        raise ThreadsError(f"cannot keep long-term memory in {threads.location}: {exc}") from None


def close_store(store: BaseStore) -> None:
    """Close what `store_of` opened for `store`.

    That is a SQLite store's own connection; a PostgreSQL store shares the threads' pool,
    which is closed with them.
    """
    if isinstance(store, SqliteStore):
        store.conn.close()


@contextlib.contextmanager
def open_store(db: str | Path | None = None) -> Iterator[BaseStore]:
    """Open the long-term store of a `--db` value (SQLite path, default per-user, or PostgreSQL URL).

    For a caller that has no thread database open; one that has (the CLI) uses `store_of`.
    """
    threads = open_threads(db)
    try:
        store = store_of(threads)
        try:
            yield store
        finally:
            close_store(store)
    finally:
        threads.close()
