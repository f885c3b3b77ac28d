"""Threads in PostgreSQL: LangGraph's `PostgresSaver`, the thread registry, advisory run locks.

One database serves any number of processes on any machines. The registry is the table
`wikireact_threads`. Run locks are session-level advisory locks, and the checkpoints are
saved (by LangGraph's `PostgresSaver`, here `NulSafePostgresSaver`, which also saves text
holding NUL) on that same session: PostgreSQL releases the locks when the session ends
(a killed process, an administrator, a server restart, a network failure), and from then
on nothing of this process can be saved, so a process that lost its locks can never fork a
thread that another process took over: its episodes stop at their next save
(`LockLostError`), and another process continues them from their last checkpoint. The
session outlives idle timeouts; TCP keepalives bound a vanished machine (`pg_connect`).
Saves are one at a time per process either way (`PostgresSaver` holds a lock around
every query, even on a pool). Other queries use a psycopg pool. The saver packs what it
stores (`wikireact.storage.postgres.layout`): about the bytes per step of the SQLite store.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from wikireact.context import Context
from wikireact.errors import LockLostError, ThreadsError, first_line
from wikireact.storage.postgres.connect import connect, open_pool
from wikireact.storage.postgres.saver import NUL, NulSafePostgresSaver
from wikireact.storage.postgres.url import hide_password, redacted
from wikireact.storage.registry import (
    DEFAULT_AGENT,
    decode_agent,
    decode_context,
    decode_snapshot_id,
    encode_context,
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
LOCK_PREFIX = "wikireact:"
"""A thread's run lock is the advisory lock `hashtextextended(LOCK_PREFIX || thread_id, 0)`."""


def describe(url: str) -> str:
    """Return `postgresql://host:port/dbname` (or the service's name) for messages: no password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
        return "the PostgreSQL URL (unparseable)"
    if "service" in parts and "host" not in parts:
        return f"PostgreSQL service {parts['service']}"
    return f"postgresql://{parts.get('host', 'localhost')}:{parts.get('port', 5432)}/{parts.get('dbname', '')}"


class PostgresThreads:
    """A PostgreSQL database: a `PostgresSaver`, the settings of every thread, run locks."""

    def __init__(self, url: str, *, pool_size: int = 4) -> None:
        """Connect to `url`, create the tables if needed; `pool_size` bounds the connections."""
        self.url = url
        try:
            conninfo_to_dict(url)
        except psycopg.Error as exc:  # libpq quotes what it cannot parse: the password, maybe
            raise ThreadsError(
                f"{redacted(url)} is not a valid PostgreSQL URL: {hide_password(first_line(exc), url)}"
            ) from None
        self.location = describe(url)
        self._held: set[str] = set()
        self._claims = threading.Lock()
        try:
            self.session = connect(url)
        except psycopg.Error as exc:
            raise ThreadsError(
                f"cannot connect to {self.location}: {hide_password(first_line(exc), url)}"
            ) from None
        self.saver = NulSafePostgresSaver(self.session, location=self.location)
        self.pool = open_pool(url, pool_size)
        try:
            self.pool.wait(timeout=15)
            with self.setup_lock():
                self.saver.setup()
                with self.pool.connection() as conn:
                    conn.execute(_SCHEMA)
        except ThreadsError:  # a refusal that names the database already (a newer layout)
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise ThreadsError(
                f"cannot use {self.location}: {hide_password(first_line(exc), url)}"
            ) from None

    @contextlib.contextmanager
    def setup_lock(self) -> Iterator[None]:
        """Serialise schema changes between processes.

        Polls with `pg_try_advisory_lock`: a session blocked in `pg_advisory_lock` is an open
        statement, which `CREATE INDEX CONCURRENTLY` in `PostgresSaver.setup()` waits for:
        an undetected deadlock when several workers start at once.
        """
        while not self._on_session("SELECT pg_try_advisory_lock(%s) AS taken", SETUP_LOCK):
            time.sleep(0.05)
        try:
            yield
        finally:
            self._on_session("SELECT pg_advisory_unlock(%s) AS taken", SETUP_LOCK)

    def _on_session(self, query: str, key: object) -> bool:
        """Run a lock query on the session (between the saver's queries); return its `taken`."""
        with self.saver.lock:
            row = self.session.execute(query, (key,)).fetchone()
        return bool(row and row["taken"])

    def register(
        self,
        thread_id: str,
        question: str,
        context: Context,
        snapshot_id: str | None = None,
        agent: str = DEFAULT_AGENT,
    ) -> None:
        """Record a new thread's question and settings (and snapshot); refuse a thread id in use."""
        if NUL in question or NUL in thread_id:
            raise ThreadsError(
                "a thread id or question with a NUL character (U+0000) cannot be stored in PostgreSQL"
            )
        with self.pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO wikireact_threads VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (thread_id) DO NOTHING RETURNING thread_id",
                (thread_id, question, encode_context(context, snapshot_id, agent), time.time()),
            ).fetchone()
        if row is None:
            raise ThreadsError(
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
            raise ThreadsError(f"unknown thread id {thread_id!r} in {self.location}")
        return dict(row)

    def context_fields(self, thread_id: str) -> dict[str, Any]:
        """Return the settings a thread started with; raise for an unknown thread."""
        return decode_context(self._registered(thread_id)["settings"])

    def snapshot_id(self, thread_id: str) -> str | None:
        """Return the id of the snapshot a thread started on (None: not a snapshot)."""
        return decode_snapshot_id(self._registered(thread_id)["settings"])

    def agent(self, thread_id: str) -> str:
        """Return the agent that runs a thread (`react` for threads older than agents)."""
        return decode_agent(self._registered(thread_id)["settings"])

    def question(self, thread_id: str) -> str:
        """Return the question a thread started with; raise for an unknown thread."""
        return str(self._registered(thread_id)["question"])

    def try_claim(self, key: str) -> bool:
        """Take the advisory run lock on `key` if free; return whether it was taken.

        Raises `LockLostError` once the session holding the locks has ended.
        """
        with self._claims:
            if key in self._held:  # advisory locks are re-entrant within one session
                return False
            try:
                taken = self._on_session(
                    "SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS taken",
                    LOCK_PREFIX + key,
                )
            except psycopg.OperationalError as exc:
                if self.lock_lost():
                    raise LockLostError(LockLostError.explain(self.location, exc)) from None
                raise
            if taken:
                self._held.add(key)
            return taken

    def release(self, key: str) -> None:
        """Release a run lock taken by `try_claim` (nothing to do once the session has ended)."""
        with self._claims:
            if key not in self._held:
                return
            self._held.discard(key)
            try:
                self._on_session(
                    "SELECT pg_advisory_unlock(hashtextextended(%s, 0)) AS taken",
                    LOCK_PREFIX + key,
                )
            except psycopg.OperationalError:
                if not self.lock_lost():
                    raise

    def lock_lost(self) -> bool:
        """Whether the session holding the run locks (and saving the checkpoints) has ended."""
        return self.session.broken or self.session.closed

    def close(self) -> None:
        """Close the pool and the session (which releases every run lock)."""
        self.pool.close()
        self.session.close()
