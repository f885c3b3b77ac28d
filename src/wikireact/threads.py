"""Episodes as checkpointed threads in one SQLite file, with the settings each started with.

The file holds LangGraph's `SqliteSaver` tables plus `wikireact_threads`, which records
every thread's `Context` so `resume` continues with the same model, wiki and budget.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from wikireact.context import Context
from wikireact.errors import ConfigurationError
from wikireact.paths import data_dir
from wikireact.saver import CompactSqliteSaver, CompressingSerializer
from wikireact.sqlite_files import ForeignFileError, check_writable_as

SCHEMA_VERSION = 1
MARKER_TABLES = frozenset({"wikireact_threads"})
"""A file holding these tables is a checkpoint file; any other non-empty file is refused."""
SNAPSHOT_ID_KEY = "_snapshot_id"
"""Stored beside a thread's settings: the id of the snapshot it started on."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS wikireact_threads(
    thread_id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    settings TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class ThreadStoreError(ConfigurationError):
    """The checkpoint file cannot be used, or a thread is unknown."""


def default_db_path() -> Path:
    """Return the per-user checkpoint file (override: WIKIREACT_DATA_DIR)."""
    return data_dir() / "threads.db"


class ThreadStore:
    """A checkpoint file: a `SqliteSaver` and the settings of every thread."""

    def __init__(self, path: str | Path) -> None:
        """Open (creating if needed) the checkpoint file at `path`."""
        path = Path(path)
        self.path = path
        try:
            check_writable_as(path, MARKER_TABLES)
        except ForeignFileError as exc:
            raise ThreadStoreError(f"cannot use checkpoint file {path}: {exc}") from None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self.conn.execute("PRAGMA busy_timeout=30000")
            found = int(self.conn.execute("PRAGMA user_version").fetchone()[0])
            if found > SCHEMA_VERSION:
                self.conn.close()
                raise ThreadStoreError(
                    f"checkpoint file {path} was written by a newer wikireact (schema {found}, "
                    f"this one reads {SCHEMA_VERSION}); upgrade wikireact or use another --db"
                )
            # WAL with synchronous=NORMAL: a commit survives the process being killed at any
            # moment (bench/kill_resume.py); only a power cut may lose the last commits.
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute(_SCHEMA)
            self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.conn.commit()
            self.saver = CompactSqliteSaver(self.conn, serde=CompressingSerializer())
            self.saver.setup()
        except (sqlite3.Error, OSError) as exc:
            raise ThreadStoreError(f"cannot use checkpoint file {path}: {exc}") from None

    def register(self, thread_id: str, question: str, context: Context, snapshot_id: str | None = None) -> None:
        """Record a new thread's question and settings; refuse a thread id already in use.

        `snapshot_id` identifies the snapshot the thread starts on, checked on resume.
        """
        settings = context.as_dict() | ({SNAPSHOT_ID_KEY: snapshot_id} if snapshot_id else {})
        try:
            with self.conn:
                self.conn.execute(
                    "INSERT INTO wikireact_threads VALUES (?, ?, ?, ?)",
                    (thread_id, question, json.dumps(settings), time.time()),
                )
        except sqlite3.IntegrityError:
            raise ThreadStoreError(
                f"thread {thread_id!r} already exists; use `wikireact resume {thread_id}` "
                "or pick another --thread-id"
            ) from None
        except sqlite3.Error as exc:  # e.g. a full disk: nothing was recorded
            raise ThreadStoreError(f"cannot record thread {thread_id!r} in {self.path}: {exc}") from None

    def _registered(self, thread_id: str) -> tuple[str, str]:
        row = self.conn.execute(
            "SELECT question, settings FROM wikireact_threads WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        if row is None:
            raise ThreadStoreError(f"unknown thread id {thread_id!r} in {self.path}")
        return str(row[0]), str(row[1])

    def settings(self, thread_id: str) -> dict[str, Any]:
        """Return the settings (`Context` fields) a thread started with; raise for an unknown thread.

        Threads registered before the tools protocol existed used the text protocol.
        """
        stored = {"protocol": "text", **json.loads(self._registered(thread_id)[1])}
        stored.pop(SNAPSHOT_ID_KEY, None)
        return stored

    def snapshot_id(self, thread_id: str) -> str | None:
        """Return the id of the snapshot a thread started on (None: not a snapshot, or unknown)."""
        value = json.loads(self._registered(thread_id)[1]).get(SNAPSHOT_ID_KEY)
        return str(value) if value else None

    def question(self, thread_id: str) -> str:
        """Return the question a thread started with; raise for an unknown thread."""
        return self._registered(thread_id)[0]

    def close(self) -> None:
        """Close the file."""
        self.conn.close()
