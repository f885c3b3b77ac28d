"""Episodes as checkpointed threads, with the `Context` each started with: the common part.

`open_threads(db)` opens a SQLite file (`wikireact.storage.sqlite.threads.SqliteThreads`) or a PostgreSQL URL
(`wikireact.storage.postgres.threads.PostgresThreads`). Either holds LangGraph's checkpoint
tables plus `wikireact_threads`, which records every thread's `Context` so `resume`
continues with the same model, wiki and budget, and either lets at most one process run a
thread at a time (`runner`).
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver

from wikireact._extras import missing_extra
from wikireact._paths import data_dir
from wikireact.context import Context
from wikireact.errors import ThreadBusyError, ThreadsError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def database_errors() -> tuple[type[Exception], ...]:
    """Return the exceptions a checkpoint store raises when its file or server fails mid-run.

    psycopg's only once it is loaded (a PostgreSQL store was opened): before that none of
    them can occur, and importing it would cost every SQLite command a third of a second.
    """
    psycopg = sys.modules.get("psycopg")
    return (sqlite3.Error,) if psycopg is None else (sqlite3.Error, psycopg.Error)


def __getattr__(name: str) -> Any:
    """`DATABASE_ERRORS`, as before `database_errors()`: imports psycopg when it is installed."""
    if name != "DATABASE_ERRORS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with contextlib.suppress(ImportError):
        import psycopg  # noqa: F401
    return database_errors()


def is_postgres_url(db: str | Path | None) -> bool:
    """Whether `db` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(db, str) and db.startswith(POSTGRES_SCHEMES)


def default_db_path() -> Path:
    """Return the per-user checkpoint file (override: WIKIREACT_DATA_DIR)."""
    return data_dir() / "threads.db"


class Threads(Protocol):
    """What the CLI and the eval need from a checkpoint store, SQLite or PostgreSQL."""

    location: str

    @property
    def saver(self) -> BaseCheckpointSaver:
        """The LangGraph checkpointer."""

    def register(
        self,
        thread_id: str,
        question: str,
        context: Context,
        snapshot_id: str | None = None,
        agent: str = "react",
    ) -> None:
        """Record a new thread's question, settings and agent (and the snapshot it starts on)."""

    def context_fields(self, thread_id: str) -> dict[str, Any]:
        """Return the settings a thread started with."""

    def snapshot_id(self, thread_id: str) -> str | None:
        """Return the id of the snapshot a thread started on (None: not a snapshot)."""

    def agent(self, thread_id: str) -> str:
        """Return the agent that runs a thread (`react` for threads older than agents)."""

    def question(self, thread_id: str) -> str:
        """Return the question a thread started with."""

    def try_claim(self, key: str) -> bool:
        """Take the run lock on `key` if no process holds it; return whether it was taken."""

    def release(self, key: str) -> None:
        """Release a run lock taken by `try_claim`."""

    def lock_lost(self) -> bool:
        """Whether this process lost its run locks (PostgreSQL: their session ended)."""

    def close(self) -> None:
        """Release the store's connections."""


@contextlib.contextmanager
def runner(store: Threads, thread_id: str) -> Iterator[None]:
    """Hold `thread_id`'s run lock for the block, or raise `ThreadBusyError` at once."""
    if not store.try_claim(thread_id):
        raise ThreadBusyError(
            f"thread {thread_id!r} is being run by another process right now; "
            f"wait until it stops, then `wikireact resume {thread_id}` if it did not finish"
        )
    try:
        yield
    finally:
        store.release(thread_id)


def _registered_question(store: Threads, thread_id: str) -> str | None:
    try:
        return store.question(thread_id)
    except ThreadsError:  # not registered
        return None


def thread_question(store: Threads, thread_id: str) -> str | None:
    """Return the question of an existing thread, None if there is no such thread.

    The registry's question; for a thread with checkpoints but no registry row (a library
    run, or an evaluation before evaluations registered their threads), the question in
    its state ("" if there is none).
    """
    registered = _registered_question(store, thread_id)
    if registered is not None:
        return registered
    saved = store.saver.get_tuple({"configurable": {"thread_id": thread_id}})
    if saved is None:
        return None
    return str(saved.checkpoint["channel_values"].get("question") or "")


def ensure_registered(
    store: Threads,
    thread_id: str,
    question: str,
    context: Context,
    snapshot_id: str | None = None,
    agent: str = "react",
) -> None:
    """Register a thread (as `Threads.register`) unless it is already; refuse another question.

    For a caller that holds the thread's run lock, so nobody registers it meanwhile. A
    thread with checkpoints but no registry row gets one.
    """
    registered = _registered_question(store, thread_id)
    found = registered if registered is not None else thread_question(store, thread_id)
    if found and found != question:
        raise ThreadsError(
            f"thread {thread_id!r} in {store.location} holds another question "
            f"({found!r}), not {question!r}"
        )
    if registered is None:
        store.register(thread_id, question, context, snapshot_id=snapshot_id, agent=agent)


def open_threads(db: str | Path | None = None, *, read_only: bool = False) -> Threads:
    """Open a SQLite checkpoint file (path, default: per-user) or a PostgreSQL URL.

    `read_only` opens a SQLite file for reading only (see `SqliteThreads`); it does not
    apply to PostgreSQL.
    """
    if is_postgres_url(db):
        try:
            from wikireact.storage.postgres.threads import PostgresThreads
        except ImportError:
            raise ThreadsError(missing_extra("PostgreSQL threads need", "postgres")) from None
        return PostgresThreads(str(db))
    from wikireact.storage.sqlite.threads import SqliteThreads

    return SqliteThreads(db or default_db_path(), read_only=read_only)
