"""Processes that open the long-term Store of a new SQLite file at once all get it (issue 34 item 15).

Before, LangGraph's `SqliteStore.setup` ran in each of them at the same moment: some failed
with "duplicate column name: expires_at" or "UNIQUE constraint failed: store_migrations.v".
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from wikireact.storage.long_term import close_store, open_store, store_of
from wikireact.storage.threads import open_threads

PROCESSES = 32


def open_at_once(db: str, index: int, start: Barrier, results: Any) -> None:
    """Open the file's threads, wait for every process, then open its Store (as the CLI does)
    and write one item; report the error, if any."""
    try:
        threads = open_threads(db)
        try:
            start.wait(timeout=120)
            store = store_of(threads)
            store.put(("lessons",), f"k{index}", {"lesson": f"lesson {index}"})
            close_store(store)
        finally:
            threads.close()
        results.put("")
    except Exception as exc:
        results.put(f"{type(exc).__name__}: {exc}")


def test_processes_opening_a_new_store_file_at_once_all_succeed(tmp_path: Path) -> None:
    db = str(tmp_path / "threads.db")
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(PROCESSES), context.Queue()
    workers = [
        context.Process(target=open_at_once, args=(db, i, start, results)) for i in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    errors = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert [e for e in errors if e] == []
    with open_store(db) as store:
        assert len(store.search(("lessons",), limit=100)) == PROCESSES
