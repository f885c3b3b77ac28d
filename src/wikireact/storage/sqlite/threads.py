"""Threads in one SQLite file: wikireact's compact checkpointer, the thread registry, run locks."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wikireact.context import Context
from wikireact.errors import ForeignFileError, ThreadsError
from wikireact.storage.registry import (
    DEFAULT_AGENT,
    decode_agent,
    decode_context,
    decode_snapshot_id,
    encode_context,
)
from wikireact.storage.sqlite import lock as runlock
from wikireact.storage.sqlite.files import check_writable_as, read_untouched
from wikireact.storage.sqlite.saver import CompactSqliteSaver, CompressingSerializer
from wikireact.storage.sqlite.wal import WalCheckpointer

SCHEMA_VERSION = 3
"""2: large delta-channel snapshots may be stored in pieces (`wikireact.storage.sqlite.value_chunks`);
3: checkpoints stored against their parent's (`wikireact.storage.sqlite.parent_deltas`) and
streams against a second dictionary, which a version reading 2 cannot decode: it refuses the file."""
PAGE_SIZE = 8192
"""Page size of a new file (bytes); see `SqliteThreads.__init__`."""
SETUP_LOCK = "\x00wikireact:setup"
"""The run-lock key serialising schema setup between processes (NUL-prefixed: no thread is named so)."""
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


def _check_schema_version(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse (closing `conn`) a checkpoint file written by a newer wikireact."""
    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if found > SCHEMA_VERSION:
        conn.close()
        raise ThreadsError(
            f"checkpoint file {path} was written by a newer wikireact (schema {found}, "
            f"this one reads {SCHEMA_VERSION}); upgrade wikireact or use another --db"
        )


class SqliteThreads:
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
        self._claims: set[str] = set()
        try:
            check_writable_as(path, MARKER_TABLES)
        except ForeignFileError as exc:
            raise ThreadsError(f"cannot use checkpoint file {path}: {exc}") from None
        if read_only:
            self._open_read_only(path)
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self.conn.execute("PRAGMA busy_timeout=30000")
            _check_schema_version(self.conn, path)
            # A new file gets 8 KiB pages: a WITHOUT ROWID row over ~1 KB of a 4 KiB page (a
            # page's text, 32 steps of a snapshot) spills into an overflow page of its own,
            # mostly empty (the 97-step reading episode: 1.8x its content instead of 2.0x).
            # An existing file keeps its page size.
            self.conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            # WAL with synchronous=NORMAL: a commit survives the process being killed at any
            # moment (bench/kill_resume.py); only a power cut may lose the last commits.
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            # The log is folded into the file by a background thread, not inside a commit.
            self._wal = WalCheckpointer(path, self.conn)
            self.conn.execute(_SCHEMA)
            self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.conn.commit()
            self.saver = CompactSqliteSaver(
                self.conn, serde=CompressingSerializer(location=str(path))
            )
            self.saver.on_commit = self._wal.poke  # the log is folded after commits, never idle
            self.saver.setup()
        except (sqlite3.Error, OSError) as exc:
            raise ThreadsError(f"cannot use checkpoint file {path}: {exc}") from None

    def _open_read_only(self, path: Path) -> None:
        def check(conn: sqlite3.Connection) -> sqlite3.Connection:
            _check_schema_version(conn, path)
            return conn

        try:
            self.conn = read_untouched(path, check, keep_open=True)
        except sqlite3.Error as exc:
            raise ThreadsError(f"cannot use checkpoint file {path}: {exc}") from None
        self.saver = CompactSqliteSaver(self.conn, serde=CompressingSerializer(location=str(path)))
        self.saver.is_setup = True  # its tables are there, or the thread is unknown
        try:  # a stock SqliteSaver run on this file left writes only a writer moves
            self.saver.read_stock_writes()
        except sqlite3.Error as exc:
            raise ThreadsError(f"cannot use checkpoint file {path}: {exc}") from None

    def register(
        self,
        thread_id: str,
        question: str,
        context: Context,
        snapshot_id: str | None = None,
        agent: str = DEFAULT_AGENT,
    ) -> None:
        """Record a new thread's question and settings; refuse a thread id already in use.

        `snapshot_id` identifies the snapshot the thread starts on, checked on resume.
        """
        try:  # under the saver's lock: a commit here must not split one of its transactions
            with self.saver.lock, self.conn:
                self.conn.execute(
                    "INSERT INTO wikireact_threads VALUES (?, ?, ?, ?)",
                    (thread_id, question, encode_context(context, snapshot_id, agent), time.time()),
                )
        except sqlite3.IntegrityError:
            raise ThreadsError(
                f"thread {thread_id!r} already exists; use `wikireact resume {thread_id}` "
                "or pick another --thread-id"
            ) from None
        except sqlite3.Error as exc:  # e.g. a full disk: nothing was recorded
            raise ThreadsError(
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
            raise ThreadsError(f"unknown thread id {thread_id!r} in {self.path}")
        return str(row[0]), str(row[1])

    def context_fields(self, thread_id: str) -> dict[str, Any]:
        """Return the settings (`Context` fields) a thread started with; raise for an unknown thread.

        Threads registered before the tools protocol existed used the text protocol.
        """
        return decode_context(self._registered(thread_id)[1])

    def snapshot_id(self, thread_id: str) -> str | None:
        """Return the id of the snapshot a thread started on (None: not a snapshot, or unknown)."""
        return decode_snapshot_id(self._registered(thread_id)[1])

    def agent(self, thread_id: str) -> str:
        """Return the agent that runs a thread (`react` for threads older than agents)."""
        return decode_agent(self._registered(thread_id)[1])

    def question(self, thread_id: str) -> str:
        """Return the question a thread started with; raise for an unknown thread."""
        return self._registered(thread_id)[0]

    @contextlib.contextmanager
    def setup_lock(self) -> Iterator[None]:
        """Serialise schema changes between processes (as `PostgresThreads.setup_lock` does).

        Polls the run lock `SETUP_LOCK` in `FILE.lock`, which the kernel frees if its
        holder dies.
        """
        while not self.try_claim(SETUP_LOCK):
            time.sleep(0.05)
        try:
            yield
        finally:
            self.release(SETUP_LOCK)

    def try_claim(self, key: str) -> bool:
        """Take the run lock on `key` (a lock in `FILE.lock`, freed when the process ends)."""
        try:
            claimed = runlock.try_lock(self.path.with_name(self.path.name + ".lock"), key)
        except OSError as exc:
            raise ThreadsError(f"cannot lock threads in {self.path}: {exc}") from None
        if claimed:
            self._claims.add(key)
        return claimed

    def release(self, key: str) -> None:
        """Release a run lock taken by `try_claim`."""
        runlock.unlock(self.path.with_name(self.path.name + ".lock"), key)
        self._claims.discard(key)

    def lock_lost(self) -> bool:
        """Never: the kernel holds a process's file locks until it ends."""
        return False

    def close(self) -> None:
        """Release the run locks this object still holds, then close the file."""
        for key in sorted(self._claims):
            self.release(key)
        if self._wal is not None:
            self._wal.close()
        self.conn.close()
