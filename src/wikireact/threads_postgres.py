"""Threads in PostgreSQL: LangGraph's `PostgresSaver`, the thread registry, advisory run locks.

One database serves any number of processes on any machines. Checkpoints go through
LangGraph's `PostgresSaver` (`NulSafePostgresSaver`: it also saves text holding NUL) on a psycopg `ConnectionPool` (`autocommit=True`,
`prepare_threshold=0`, `row_factory=dict_row`, as LangGraph documents), with its own
string versions and serializer: PostgreSQL compresses large values itself, and wikireact's
integer versions and zlib made the tables larger, not smaller (measured). The registry is
the table `wikireact_threads`. Run locks are session-level advisory locks held on one
dedicated connection: PostgreSQL releases them when that connection ends, so a killed
process frees its threads at once; TCP keepalives bound it for a machine that vanished.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool

from wikireact.context import Context
from wikireact.errors import first_line
from wikireact.pg_url import hide_password, redacted
from wikireact.postgres_saver import NUL, NulSafePostgresSaver
from wikireact.thread_settings import (
    ThreadStoreError,
    decode_settings,
    decode_snapshot_id,
    encode_settings,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS wikireact_threads(
    thread_id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    settings TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL
)
"""
SETUP_LOCK = 7_310_551_301
"""Advisory lock key serialising schema setup between processes starting at once."""
KEEPALIVES = "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3"
"""The server drops a vanished client's lock connection (and its locks) after about 25 s."""


def describe(url: str) -> str:
    """Return `postgresql://host:port/dbname` (or the service's name) for messages: no password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
        return "the PostgreSQL URL (unparseable)"
    if "service" in parts and "host" not in parts:
        return f"PostgreSQL service {parts['service']}"
    return f"postgresql://{parts.get('host', 'localhost')}:{parts.get('port', 5432)}/{parts.get('dbname', '')}"


class PostgresThreadStore:
    """A PostgreSQL database: a `PostgresSaver`, the settings of every thread, run locks."""

    def __init__(self, url: str, *, pool_size: int = 4) -> None:
        """Connect to `url`, create the tables if needed; `pool_size` bounds the connections."""
        self.url = url
        try:
            conninfo_to_dict(url)
        except psycopg.Error as exc:  # libpq quotes what it cannot parse: the password, maybe
            raise ThreadStoreError(
                f"{redacted(url)} is not a valid PostgreSQL URL: {hide_password(first_line(exc), url)}"
            ) from None
        self.location = describe(url)
        self._held: set[str] = set()
        self._lock = threading.Lock()
        try:
            self.lock_conn = psycopg.connect(
                url, autocommit=True, connect_timeout=10, options=KEEPALIVES
            )
        except psycopg.Error as exc:
            raise ThreadStoreError(
                f"cannot connect to {self.location}: {hide_password(first_line(exc), url)}"
            ) from None
        self.pool = ConnectionPool[psycopg.Connection[DictRow]](
            url,
            min_size=1,
            max_size=max(pool_size, 2),
            open=True,
            connection_class=psycopg.Connection[DictRow],
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        )
        try:
            self.pool.wait(timeout=15)
            self.saver = NulSafePostgresSaver(self.pool)
            with self.setup_lock():
                self.saver.setup()
                with self.pool.connection() as conn:
                    conn.execute(_SCHEMA)
        except Exception as exc:
            self.close()
            raise ThreadStoreError(
                f"cannot use {self.location}: {hide_password(first_line(exc), url)}"
            ) from None

    @contextlib.contextmanager
    def setup_lock(self) -> Iterator[None]:
        """Serialise schema changes between processes.

        Polls with `pg_try_advisory_lock`: a session blocked in `pg_advisory_lock` is an open
        statement, which `CREATE INDEX CONCURRENTLY` in `PostgresSaver.setup()` waits for:
        an undetected deadlock when several workers start at once.
        """
        while not self.lock_conn.execute(
            "SELECT pg_try_advisory_lock(%s)", (SETUP_LOCK,)
        ).fetchone()[0]:  # type: ignore[index]
            time.sleep(0.05)
        try:
            yield
        finally:
            self.lock_conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))

    def register(
        self, thread_id: str, question: str, context: Context, snapshot_id: str | None = None
    ) -> None:
        """Record a new thread's question and settings (and snapshot); refuse a thread id in use."""
        if NUL in question or NUL in thread_id:
            raise ThreadStoreError(
                "a thread id or question with a NUL character (U+0000) cannot be stored in PostgreSQL"
            )
        with self.pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO wikireact_threads VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (thread_id) DO NOTHING RETURNING thread_id",
                (thread_id, question, encode_settings(context, snapshot_id), time.time()),
            ).fetchone()
        if row is None:
            raise ThreadStoreError(
                f"thread {thread_id!r} already exists; use `wikireact resume {thread_id}` "
                "or pick another --thread-id"
            )

    def _registered(self, thread_id: str) -> dict[str, Any]:
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT question, settings FROM wikireact_threads WHERE thread_id = %s",
                (thread_id,),
            ).fetchone()
        if row is None:
            raise ThreadStoreError(f"unknown thread id {thread_id!r} in {self.location}")
        return dict(row)

    def settings(self, thread_id: str) -> dict[str, Any]:
        """Return the settings a thread started with; raise for an unknown thread."""
        return decode_settings(self._registered(thread_id)["settings"])

    def snapshot_id(self, thread_id: str) -> str | None:
        """Return the id of the snapshot a thread started on (None: not a snapshot)."""
        return decode_snapshot_id(self._registered(thread_id)["settings"])

    def question(self, thread_id: str) -> str:
        """Return the question a thread started with; raise for an unknown thread."""
        return str(self._registered(thread_id)["question"])

    def try_claim(self, key: str) -> bool:
        """Take the advisory run lock on `key` if free; return whether it was taken."""
        with self._lock:
            if key in self._held:  # advisory locks are re-entrant within one session
                return False
            row = self.lock_conn.execute(
                "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", ("wikireact:" + key,)
            ).fetchone()
            if not row or not row[0]:
                return False
            self._held.add(key)
            return True

    def release(self, key: str) -> None:
        """Release a run lock taken by `try_claim`."""
        with self._lock:
            if key not in self._held:
                return
            self._held.discard(key)
            self.lock_conn.execute(
                "SELECT pg_advisory_unlock(hashtextextended(%s, 0))", ("wikireact:" + key,)
            )

    def close(self) -> None:
        """Close the pool and the lock connection (which releases every run lock)."""
        self.pool.close()
        self.lock_conn.close()
