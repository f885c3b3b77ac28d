"""Long episodes: reading, resuming and storing a thread costs the same per step at any length."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langchain_core.runnables import RunnableConfig
from support import MANY_PAGES, distinct_steps

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.threads import ThreadStore

WIKI = MemorySource(MANY_PAGES)
CONFIG: RunnableConfig = {"configurable": {"thread_id": "long"}}


def write_thread(db: Path, steps: int) -> None:
    """Run a `steps`-step episode to its end into `db`, as the CLI saves it."""
    store = ThreadStore(db)
    graph = build_graph(
        store.saver, model=ScriptedChatModel(outputs=distinct_steps(steps)), wiki=WIKI
    )
    out = graph.invoke(
        {"question": "q"},
        CONFIG,
        context=Context(max_steps=steps, repetition_limit=steps),
        durability="sync",
    )
    assert out["steps"] == steps and out["status"] == "finished"
    store.close()


def cold_read_work(db: Path) -> int:
    """SQLite VM instructions (in hundreds) of one `get_state` from a freshly opened file."""
    store = ThreadStore(db)
    work = [0]

    def count() -> int:
        work[0] += 1
        return 0

    store.conn.set_progress_handler(count, 100)
    state = build_graph(store.saver, wiki=WIKI).get_state(CONFIG)
    store.conn.set_progress_handler(None, 0)
    store.close()
    assert state.values["status"] == "finished"
    return work[0]


def test_a_cold_read_of_a_long_thread_does_not_walk_its_whole_history(tmp_path: Path) -> None:
    """Reading the latest state walks back to the nearest snapshots only, not to the first step."""
    write_thread(tmp_path / "short.db", 100)
    write_thread(tmp_path / "long.db", 400)
    short, long = cold_read_work(tmp_path / "short.db"), cold_read_work(tmp_path / "long.db")
    assert long < 1.5 * short, (short, long)


def file_bytes(db: Path) -> int:
    """Return the size of a checkpoint file with its write-ahead log folded in."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db.stat().st_size


def test_checkpoint_bytes_per_step_do_not_grow_with_the_episode(tmp_path: Path) -> None:
    """Snapshots of the growing channels store only what is new, not the whole history again."""
    per_step = []
    for steps in (100, 800):
        write_thread(tmp_path / f"{steps}.db", steps)
        per_step.append(file_bytes(tmp_path / f"{steps}.db") / steps)
    assert per_step[1] < 1.05 * per_step[0], per_step
