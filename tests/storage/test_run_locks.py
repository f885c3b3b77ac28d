"""Run locks beside SQLite files: taken once per thread, released, and no descriptor kept after."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wikireact.storage.sqlite import lock as runlock
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.storage.threads import runner


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
def test_released_locks_keep_no_descriptor_open(tmp_path: Path) -> None:
    before = open_fds()
    for n in range(50):
        path = tmp_path / f"t{n}.db.lock"
        assert runlock.try_lock(path, "thread")
        assert not runlock.try_lock(path, "thread")  # held: one runner per thread
        runlock.unlock(path, "thread")
    assert open_fds() == before


def test_a_file_stays_open_while_any_of_its_locks_is_held(tmp_path: Path) -> None:
    # Closing any descriptor of a file drops every POSIX lock the process holds on it.
    path = tmp_path / "t.db.lock"
    assert runlock.try_lock(path, "a") and runlock.try_lock(path, "b")
    runlock.unlock(path, "a")
    assert runlock.held_files() == {str(path.resolve())}
    assert not runlock.try_lock(path, "b")
    runlock.unlock(path, "b")
    assert runlock.held_files() == set()


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
def test_threads_opened_and_run_many_times_leak_no_descriptor(tmp_path: Path) -> None:
    def cycle(n: int) -> None:
        store = SqliteThreads(tmp_path / f"s{n}.db")
        try:
            with runner(store, "thread"):
                pass
        finally:
            store.close()

    cycle(0)  # the first opens what every later one shares (imports, caches)
    before = open_fds()
    for n in range(1, 30):
        cycle(n)
    assert open_fds() == before


def test_closing_threads_releases_the_run_locks_they_still_hold(tmp_path: Path) -> None:
    store = SqliteThreads(tmp_path / "threads.db")
    assert store.try_claim("a") and store.try_claim("b")
    store.release("a")
    store.close()  # an owner that closes gives back what it took, even on an error path
    assert runlock.held_files() == set()
    again = SqliteThreads(tmp_path / "threads.db")
    try:
        assert again.try_claim("b")
    finally:
        again.close()
