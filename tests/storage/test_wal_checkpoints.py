"""A checkpoint file's write-ahead log is folded in by a background thread, not by a commit."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from support import PAGES

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.models.scripted import ScriptOutput
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.storage.sqlite.wal import fold_while_open

SCRIPT: list[ScriptOutput] = [
    "Thought: look.\nAction: Search[Ed Wood]",
    "Thought: done.\nAction: Finish[1924]",
]


def wal_threads(path: Path) -> list[threading.Thread]:
    """The background threads folding `path`'s log."""
    return [t for t in threading.enumerate() if t.name == f"wikireact-wal {path}"]


def run_episodes(store: SqliteThreads, count: int, prefix: str = "t") -> None:
    graph = build_graph(
        store.saver, model=ScriptedChatModel(outputs=SCRIPT), wiki=MemorySource(PAGES)
    )
    for i in range(count):
        out = graph.invoke(
            {"question": "When was Ed Wood born?"},
            {"configurable": {"thread_id": f"{prefix}{i}"}},
            context=Context(max_steps=5),
            durability="sync",
        )
        assert out["answer"] == "1924"


def test_commits_leave_the_log_to_the_background_thread(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    store = SqliteThreads(path)
    try:
        assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        empty = path.stat().st_size
        run_episodes(store, 20)
        deadline = time.monotonic() + 10
        while path.stat().st_size == empty and time.monotonic() < deadline:
            time.sleep(0.05)
        assert path.stat().st_size > empty, "nothing folded the log into the database file"
        run_episodes(store, 1, "later")  # commits keep working while the thread folds the log
    finally:
        store.close()
    assert not wal_threads(path)


def test_close_stops_the_thread_and_the_file_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    store = SqliteThreads(path)
    assert len(wal_threads(path)) == 1
    run_episodes(store, 3)
    store.close()
    assert not wal_threads(path)
    reopened = SqliteThreads(path)
    try:
        graph = build_graph(reopened.saver)
        values = graph.get_state({"configurable": {"thread_id": "t2"}}).values
        assert values["answer"] == "1924" and values["steps"] == 2
    finally:
        reopened.close()


def test_a_removed_file_ends_the_thread_and_is_not_recreated(tmp_path: Path) -> None:
    gone = tmp_path / "gone.db"
    fold_while_open(gone, threading.Event(), 0.01)  # returns: nothing to fold, ever
    assert not gone.exists()


def test_a_long_run_keeps_the_log_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PASSIVE checkpoints beside a busy writer never start the log over: it grew without bound."""
    monkeypatch.setattr("wikireact.storage.sqlite.wal.RESTART_OVER", 256 * 1024, raising=False)
    path = tmp_path / "threads.db"
    store = SqliteThreads(path)
    sizes, done = [0], threading.Event()

    def watch() -> None:
        while not done.wait(0.01):
            try:
                sizes.append(Path(f"{path}-wal").stat().st_size)
            except OSError:
                pass

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run_episodes(store, 400)
    finally:
        done.set()
        watcher.join()
        store.close()
    assert max(sizes) < 16_000_000, f"the log reached {max(sizes) / 1e6:.1f} MB"  # 74 MB before


def wakeups(thread: threading.Thread) -> int:
    """How often `thread` has been woken (its voluntary context switches, from /proc)."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return int(status.split("voluntary_ctxt_switches:")[1].split()[0])


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
def test_an_idle_store_wakes_no_thread(tmp_path: Path) -> None:
    # The thread used to look at the log every 0.25 s for the life of the store; it now
    # sleeps until a commit, so idle stores (a server's, a notebook's) cost nothing.
    path = tmp_path / "threads.db"
    store = SqliteThreads(path)
    try:
        run_episodes(store, 2)
        (thread,) = wal_threads(path)
        time.sleep(1.0)  # the commits' round is over
        before = wakeups(thread)
        time.sleep(1.5)
        assert wakeups(thread) - before <= 1
    finally:
        store.close()
