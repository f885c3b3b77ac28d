"""A SQLite saver write that fails midway leaves nothing of itself: it is rolled back, not committed.

`put_writes`, `delete_thread` and the registry's `unregister` write through the saver's
`cursor()`; a statement that fails after others of the same call ran must not leave those
others committed (half a thread deleted: its checkpoints gone, its writes left).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support import MANY_PAGES, distinct_steps, thread

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.storage import catalog
from wikireact.storage.sqlite.threads import SqliteThreads


class Failing:
    """A connection (or cursor) that raises on statements containing `fail_on`, else delegates."""

    def __init__(self, inner: Any, fail_on: str) -> None:
        """Wrap `inner`; statements whose SQL contains `fail_on` raise `sqlite3.OperationalError`."""
        self.inner, self.fail_on = inner, fail_on

    def __getattr__(self, name: str) -> Any:
        """Delegate everything else."""
        return getattr(self.inner, name)

    def cursor(self) -> Failing:
        """Return a failing cursor of the wrapped connection."""
        return Failing(self.inner.cursor(), self.fail_on)

    def execute(self, sql: str, *args: Any) -> Any:
        """Run `sql`, or raise when it contains `fail_on`."""
        if self.fail_on in sql:
            raise sqlite3.OperationalError(f"injected failure: {self.fail_on}")
        return self.inner.execute(sql, *args)


def _store(tmp_path: Path, steps: int = 12) -> SqliteThreads:
    store = SqliteThreads(tmp_path / "threads.db")
    graph = build_graph(
        store.saver,
        model=ScriptedChatModel(outputs=distinct_steps(steps)),
        wiki=MemorySource(MANY_PAGES),
    )
    graph.invoke(
        {"question": "q"},
        thread("t1"),
        context=Context(max_steps=steps, repetition_limit=steps),
        durability="sync",
    )
    return store


def _rows(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table} WHERE thread_id = 't1'").fetchone()[
                0
            ]
            for table in ("checkpoints", "task_writes", "value_chunks", "wikireact_threads")
        }


def test_a_delete_that_fails_midway_deletes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.conn.execute(
        "INSERT INTO wikireact_threads (thread_id, question, settings, created) "
        "VALUES ('t1', 'q', '{}', 1.0)"
    )
    store.conn.commit()
    before = _rows(tmp_path / "threads.db")
    assert before["checkpoints"] and before["task_writes"]
    real = store.saver.conn
    store.saver.conn = Failing(real, "DELETE FROM value_chunks")  # type: ignore[assignment]
    with pytest.raises(sqlite3.OperationalError, match="injected"):
        store.saver.delete_thread("t1")  # checkpoints and task_writes went first
    store.saver.conn = real
    assert _rows(tmp_path / "threads.db") == before
    store.saver.delete_thread("t1")
    catalog.unregister(store, "t1")
    assert not any(_rows(tmp_path / "threads.db").values())
    store.close()


def test_a_cursor_block_that_raises_leaves_nothing_it_wrote(tmp_path: Path) -> None:
    store = _store(tmp_path)
    before = _rows(tmp_path / "threads.db")
    with pytest.raises(KeyboardInterrupt), store.saver.cursor() as cur:
        cur.execute("DELETE FROM checkpoints WHERE thread_id = 't1'")
        raise KeyboardInterrupt  # e.g. Ctrl-C between two statements of one call
    assert _rows(tmp_path / "threads.db") == before
    with store.saver.cursor() as cur:  # the connection is usable, and a block commits
        cur.execute("DELETE FROM task_writes WHERE thread_id = 't1'")
    assert _rows(tmp_path / "threads.db")["task_writes"] == 0
    store.close()


def test_writes_pending_before_a_failed_block_are_kept_not_rolled_back(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.conn.execute(
        "INSERT INTO wikireact_threads (thread_id, question, settings, created) "
        "VALUES ('t1', 'q', '{}', 1.0)"
    )  # left uncommitted by another caller of the shared connection
    with pytest.raises(KeyboardInterrupt), store.saver.cursor() as cur:
        cur.execute("DELETE FROM checkpoints WHERE thread_id = 't1'")
        raise KeyboardInterrupt
    rows = _rows(tmp_path / "threads.db")
    assert rows["wikireact_threads"] == 1 and rows["checkpoints"] > 0
    store.close()
