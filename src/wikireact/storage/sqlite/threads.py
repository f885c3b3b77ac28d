"""Episodes as checkpointed threads, with the settings each started with.

`open_store(db)` opens a SQLite file (`ThreadStore`, below) or a PostgreSQL URL
(`wikireact.threads_postgres.PostgresThreadStore`). Either holds LangGraph's checkpoint
tables plus `wikireact_threads`, which records every thread's `Context` so `resume`
continues with the same model, wiki and budget, and either lets at most one process run a
thread at a time (`runner`).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver

from wikireact import runlock
from wikireact.context import Context
from wikireact.extras import missing_extra
from wikireact.paths import data_dir
from wikireact.saver import CompactSqliteSaver, CompressingSerializer
from wikireact.sqlite_files import ForeignFileError, check_writable_as, read_untouched
from wikireact.thread_settings import (
    ThreadBusyError,
    ThreadStoreError,
    decode_settings,
    decode_snapshot_id,
    encode_settings,
)
from wikireact.wal_checkpoints import WalCheckpointer

SCHEMA_VERSION = 2
"""2: large delta-channel snapshots may be stored in pieces (`wikireact.value_chunks`)."""
MARKER_TABLES = frozenset({"wikireact_threads"})
"""A file holding these tables is a checkpoint file; any other non-empty file is refused."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS wikireact_threads(
    thread_id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    settings TEXT NOT NULL,
    created REAL NOT NULL
)
"""


POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def _store_errors() -> tuple[type[Exception], ...]:
    try:
        import psycopg
    except ImportError:
        return (sqlite3.Error,)
    return (sqlite3.Error, psycopg.Error)


STORE_ERRORS = _store_errors()
"""Exceptions a checkpoint store raises when its file or server fails mid-run."""


def is_postgres_url(db: str | Path | None) -> bool:
    """Whether `db` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(db, str) and db.startswith(POSTGRES_SCHEMES)


def default_db_path() -> Path:
    """Return the per-user checkpoint file (override: WIKIREACT_DATA_DIR)."""
    return data_dir() / "threads.db"


class Store(Protocol):
    """What the CLI and the eval need from a checkpoint store, SQLite or PostgreSQL."""

    location: str

    @property
    def saver(self) -> BaseCheckpointSaver:
        """The LangGraph checkpointer."""

    def register(
        self, thread_id: str, question: str, context: Context, snapshot_id: str | None = None
    ) -> None:
        """Record a new thread's question and settings (and the snapshot it starts on)."""

    def settings(self, thread_id: str) -> dict[str, Any]:
        """Return the settings a thread started with."""

    def snapshot_id(self, thread_id: str) -> str | None:
        """Return the id of the snapshot a thread started on (None: not a snapshot)."""

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
def runner(store: Store, thread_id: str) -> Iterator[None]:
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


def _registered_question(store: Store, thread_id: str) -> str | None:
    try:
        return store.question(thread_id)
    except ThreadStoreError:  # not registered
        return None


def thread_question(store: Store, thread_id: str) -> str | None:
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
    store: Store,
    thread_id: str,
    question: str,
    context: Context,
    snapshot_id: str | None = None,
) -> None:
    """Register a thread (as `Store.register`) unless it is already; refuse another question.

    For a caller that holds the thread's run lock, so nobody registers it meanwhile. A
    thread with checkpoints but no registry row gets one.
    """
    registered = _registered_question(store, thread_id)
    found = registered if registered is not None else thread_question(store, thread_id)
    if found and found != question:
        raise ThreadStoreError(
            f"thread {thread_id!r} in {store.location} holds another question "
            f"({found!r}), not {question!r}"
        )
    if registered is None:
        store.register(thread_id, question, context, snapshot_id=snapshot_id)


def open_store(db: str | Path | None = None, *, read_only: bool = False) -> Store:
    """Open a SQLite checkpoint file (path, default: per-user) or a PostgreSQL URL.

    `read_only` opens a SQLite file for reading only (see `ThreadStore`); it does not
    apply to PostgreSQL.
    """
    if is_postgres_url(db):
        try:
            from wikireact.threads_postgres import PostgresThreadStore
        except ImportError:
            raise ThreadStoreError(missing_extra("PostgreSQL threads need", "postgres")) from None
        return PostgresThreadStore(str(db))
    return ThreadStore(db or default_db_path(), read_only=read_only)


def _check_schema_version(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse (closing `conn`) a checkpoint file written by a newer wikireact."""
    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if found > SCHEMA_VERSION:
        conn.close()
        raise ThreadStoreError(
            f"checkpoint file {path} was written by a newer wikireact (schema {found}, "
            f"this one reads {SCHEMA_VERSION}); upgrade wikireact or use another --db"
        )


class ThreadStore:
    """A checkpoint file: a `SqliteSaver`, the settings of every thread, run locks."""

    _wal: WalCheckpointer | None = None

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        """Open (creating if needed) the checkpoint file at `path`.

        With `read_only` the file is only read, through a connection that creates no file
        beside it (`sqlite_files.read_untouched`): it works in a read-only directory and
        leaves the file and its directory as they were.
        """
        path = Path(path)
        self.path = path
        self.location = str(path)
        try:
            check_writable_as(path, MARKER_TABLES)
        except ForeignFileError as exc:
            raise ThreadStoreError(f"cannot use checkpoint file {path}: {exc}") from None
        if read_only:
            self._open_read_only(path)
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self.conn.execute("PRAGMA busy_timeout=30000")
            _check_schema_version(self.conn, path)
            # WAL with synchronous=NORMAL: a commit survives the process being killed at any
            # moment (bench/kill_resume.py); only a power cut may lose the last commits.
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            # The log is folded into the file by a background thread, not inside a commit.
            self._wal = WalCheckpointer(path, self.conn)
            self.conn.execute(_SCHEMA)
            self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.conn.commit()
            self.saver = CompactSqliteSaver(self.conn, serde=CompressingSerializer())
            self.saver.setup()
        except (sqlite3.Error, OSError) as exc:
            raise ThreadStoreError(f"cannot use checkpoint file {path}: {exc}") from None

    def _open_read_only(self, path: Path) -> None:
        def check(conn: sqlite3.Connection) -> sqlite3.Connection:
            _check_schema_version(conn, path)
            return conn

        try:
            self.conn = read_untouched(path, check, keep_open=True)
        except sqlite3.Error as exc:
            raise ThreadStoreError(f"cannot use checkpoint file {path}: {exc}") from None
        self.saver = CompactSqliteSaver(self.conn, serde=CompressingSerializer())
        self.saver.is_setup = True  # its tables are there, or the thread is unknown

    def register(
        self, thread_id: str, question: str, context: Context, snapshot_id: str | None = None
    ) -> None:
        """Record a new thread's question and settings; refuse a thread id already in use.

        `snapshot_id` identifies the snapshot the thread starts on, checked on resume.
        """
        try:  # under the saver's lock: a commit here must not split one of its transactions
            with self.saver.lock, self.conn:
                self.conn.execute(
                    "INSERT INTO wikireact_threads VALUES (?, ?, ?, ?)",
                    (thread_id, question, encode_settings(context, snapshot_id), time.time()),
                )
        except sqlite3.IntegrityError:
            raise ThreadStoreError(
                f"thread {thread_id!r} already exists; use `wikireact resume {thread_id}` "
                "or pick another --thread-id"
            ) from None
        except sqlite3.Error as exc:  # e.g. a full disk: nothing was recorded
            raise ThreadStoreError(
                f"cannot record thread {thread_id!r} in {self.path}: {exc}"
            ) from None

    def _registered(self, thread_id: str) -> tuple[str, str]:
        with self.saver.lock:
            try:
                row = self.conn.execute(
                    "SELECT question, settings FROM wikireact_threads WHERE thread_id = ?",
                    (thread_id,),
                ).fetchone()
            except sqlite3.OperationalError as exc:  # read-only: an empty file has no tables yet
                if "no such table" not in str(exc):
                    raise
                row = None
        if row is None:
            raise ThreadStoreError(f"unknown thread id {thread_id!r} in {self.path}")
        return str(row[0]), str(row[1])

    def settings(self, thread_id: str) -> dict[str, Any]:
        """Return the settings (`Context` fields) a thread started with; raise for an unknown thread.

        Threads registered before the tools protocol existed used the text protocol.
        """
        return decode_settings(self._registered(thread_id)[1])

    def snapshot_id(self, thread_id: str) -> str | None:
        """Return the id of the snapshot a thread started on (None: not a snapshot, or unknown)."""
        return decode_snapshot_id(self._registered(thread_id)[1])

    def question(self, thread_id: str) -> str:
        """Return the question a thread started with; raise for an unknown thread."""
        return self._registered(thread_id)[0]

    def try_claim(self, key: str) -> bool:
        """Take the run lock on `key` (a lock in `FILE.lock`, freed when the process ends)."""
        try:
            return runlock.try_lock(self.path.with_name(self.path.name + ".lock"), key)
        except OSError as exc:
            raise ThreadStoreError(f"cannot lock threads in {self.path}: {exc}") from None

    def release(self, key: str) -> None:
        """Release a run lock taken by `try_claim`."""
        runlock.unlock(self.path.with_name(self.path.name + ".lock"), key)

    def lock_lost(self) -> bool:
        """Never: the kernel holds a process's file locks until it ends."""
        return False

    def close(self) -> None:
        """Close the file."""
        if self._wal is not None:
            self._wal.close()
        self.conn.close()
