"""A prune racing a writer or a reader on another connection to the same SQLite file.

Two `SqliteThreads` on one file stand for two processes. The other connection acts at a
chosen point inside the pruner's or the reader's work (a wrapped step, or a statement seen
by the connection's trace callback), so the interleaving is the same on every run. A
write that finds the file locked (its busy timeout set to 0, so nothing waits) is made
once the prune has returned, as a writer that waited would make it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base.id import uuid6
from support import thread
from test_prune import reads, run

from wikireact import build_graph
from wikireact.errors import ThreadsError
from wikireact.storage.materialise import delta_channels
from wikireact.storage.sqlite import catalog
from wikireact.storage.sqlite import prune as pruning
from wikireact.storage.sqlite.parent_deltas import ZP1
from wikireact.storage.sqlite.threads import SqliteThreads


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """A file holding thread "a", a 40-step episode whose latest checkpoint holds deltas."""
    store = SqliteThreads(tmp_path / "threads.db")
    run(store.saver, "a", steps=41)  # its latest checkpoint is stored against its parent's
    store.close()
    return tmp_path / "threads.db"


@pytest.fixture
def stores(path: Path) -> Iterator[tuple[SqliteThreads, SqliteThreads]]:
    """Two connections to the file: (the other process, the pruner)."""
    other, pruner = SqliteThreads(path), SqliteThreads(path)
    yield other, pruner
    other.close()
    pruner.close()


def channels() -> Any:
    """The episode graph's delta channels (what `threads prune` passes)."""
    return delta_channels([build_graph(None)])


def continue_thread(store: SqliteThreads, thread_id: str, run_id: str = "") -> RunnableConfig:
    """Save a child of the thread's latest checkpoint (its values unchanged), as a running writer does.

    With `run_id`, the child's metadata names that run.
    """
    latest = store.saver.get_tuple(thread(thread_id))
    assert latest is not None
    child = latest.checkpoint.copy()
    child["id"] = str(uuid6(clock_seq=-1))
    child["channel_values"] = {  # LangGraph leaves a delta channel's value out (rebuilt)
        k: v for k, v in child["channel_values"].items() if k not in channels()
    }
    metadata = latest.metadata.copy()
    if run_id:
        metadata["run_id"] = run_id
    return store.saver.put(latest.config, child, metadata, {})


def once_at(conn: sqlite3.Connection, marker: str, act: Callable[[], None]) -> list[BaseException]:
    """Run `act` once, when `conn` starts the first statement containing `marker`.

    Returns the list its error goes to (SQLite would only print it).
    """
    done: list[bool] = []
    errors: list[BaseException] = []

    def trace(statement: str) -> None:
        if marker in statement and not done:
            done.append(True)
            try:
                act()
            except BaseException as exc:  # noqa: BLE001 - handed to the test
                errors.append(exc)

    conn.set_trace_callback(trace)
    return errors


def test_checkpoints_a_writer_adds_during_a_prune_are_kept_and_read_back(
    stores: tuple[SqliteThreads, SqliteThreads], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, pruner = stores
    writer.conn.execute("PRAGMA busy_timeout=0")
    expected = reads(build_graph(writer.saver), "a")[0]
    deferred: list[Callable[[], Any]] = []

    def write() -> None:  # what a writer blocked by the prune's transaction does after it
        try:
            continue_thread(writer, "a")
        except sqlite3.OperationalError as exc:
            assert "locked" in str(exc)
            deferred.append(lambda: continue_thread(writer, "a"))

    def wrap(step: Callable[..., Any]) -> Callable[..., Any]:
        calls: list[bool] = []

        def wrapped(*args: Any) -> Any:
            if not calls:
                calls.append(True)
                if step is original_delete:
                    write()  # the second one: stored against the first, if it got in
                    return step(*args)
                out = step(*args)
                write()  # after the kept checkpoint is written whole, before the delete
                return out
            return step(*args)

        return wrapped

    original_delete = pruning._delete
    monkeypatch.setattr(pruning, "_materialise", wrap(pruning._materialise))
    monkeypatch.setattr(pruning, "_delete", wrap(pruning._delete))

    pruner.saver.prune(["a"], channels=channels())
    for late in deferred:
        late()

    fresh = SqliteThreads(writer.path)
    try:
        graph = build_graph(fresh.saver)
        for saved in fresh.saver.list(thread("a")):  # every row stands on what is stored
            assert graph.get_state(saved.config).values == expected
        assert len(list(fresh.saver.list(thread("a")))) >= 2  # the writer's are there
    finally:
        fresh.close()


def test_a_checkpoint_stored_against_its_parent_while_a_prune_rewrites_that_parent(
    stores: tuple[SqliteThreads, SqliteThreads],
) -> None:
    writer, pruner = stores
    pruner.conn.execute("PRAGMA busy_timeout=0")
    expected = reads(build_graph(writer.saver), "a")[0]
    continue_thread(writer, "a")  # the writer remembers this one: the next is a delta of it
    late: list[Callable[[], None]] = []

    def prune() -> None:  # as a pruner blocked by the writer's transaction does after it
        try:
            pruner.saver.prune(["a"], channels=channels())
        except sqlite3.OperationalError as exc:
            assert "locked" in str(exc)
            late.append(lambda: pruner.saver.prune(["a"], channels=channels()))

    errors = once_at(writer.conn, "INSERT OR REPLACE INTO checkpoints", prune)
    written = continue_thread(writer, "a")
    for step in late:
        step()

    assert not errors
    fresh = SqliteThreads(writer.path)
    try:
        assert build_graph(fresh.saver).get_state(written).values == expected
        assert len(list(fresh.saver.list(thread("a")))) == 1  # pruned, to the writer's
    finally:
        fresh.close()


def test_a_read_resolving_parent_deltas_sees_the_file_before_or_after_a_prune(
    stores: tuple[SqliteThreads, SqliteThreads],
) -> None:
    reader, pruner = stores
    head = reader.conn.execute(
        "SELECT type FROM checkpoints WHERE thread_id = 'a' ORDER BY checkpoint_id DESC LIMIT 1"
    ).fetchone()[0]
    assert head.endswith(ZP1)  # stored against its parent: a read fetches the parent's row
    graph = build_graph(reader.saver)
    before = reads(build_graph(pruner.saver), "a")
    errors = once_at(
        reader.conn,
        "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints",
        lambda: pruner.saver.prune(["a"], channels=channels()),
    )

    assert reads(graph, "a") == before
    assert not errors
    assert len(list(pruner.saver.list(thread("a")))) == 1  # the prune did happen meanwhile
    assert reads(graph, "a") == before


def test_listing_a_thread_while_it_is_pruned_gives_the_list_from_before(
    stores: tuple[SqliteThreads, SqliteThreads],
) -> None:
    reader, pruner = stores
    before = [(t.config, t.checkpoint, t.pending_writes) for t in pruner.saver.list(thread("a"))]
    errors = once_at(
        reader.conn,
        "FROM task_writes",  # the pending writes, read after the rows
        lambda: pruner.saver.prune(["a"], channels=channels()),
    )

    listed = [(t.config, t.checkpoint, t.pending_writes) for t in reader.saver.list(thread("a"))]

    assert not errors
    assert listed == before
    assert len(list(pruner.saver.list(thread("a")))) == 1


def test_rebuilding_a_checkpoint_pruned_since_it_was_listed_fails_with_one_line(
    stores: tuple[SqliteThreads, SqliteThreads],
) -> None:
    reader, pruner = stores
    graph = build_graph(reader.saver)
    listed = list(reader.saver.list(thread("a")))
    pruner.saver.prune(["a"], channels=channels())
    old = listed[1]  # its delta channels were rebuilt from ancestors now gone
    names = [ch for ch in channels() if ch not in old.checkpoint["channel_values"]]
    assert names

    with pytest.raises(ThreadsError, match="pruned or deleted") as caught:
        reader.saver.get_delta_channel_history(config=old.config, channels=names)
    assert "\n" not in str(caught.value)
    assert reads(graph, "a")[0] == reads(build_graph(pruner.saver), "a")[0]


def test_a_thread_written_throughout_its_prune_is_left_whole_with_one_line(
    stores: tuple[SqliteThreads, SqliteThreads], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, pruner = stores
    expected = reads(build_graph(writer.saver), "a")[0]
    materialise = pruning._materialise

    def and_write(*args: Any) -> None:  # a writer that adds a checkpoint every time
        materialise(*args)
        continue_thread(writer, "a")

    monkeypatch.setattr(pruning, "_materialise", and_write)

    with pytest.raises(ThreadsError, match="thread a kept changing") as caught:
        pruner.saver.prune(["a"], channels=channels())

    assert "\n" not in str(caught.value)
    graph = build_graph(pruner.saver)
    assert len(list(pruner.saver.list(thread("a")))) == 165 + pruning.ATTEMPTS  # none deleted
    for saved in list(pruner.saver.list(thread("a")))[: pruning.ATTEMPTS + 1]:
        assert graph.get_state(saved.config).values == expected


def test_threads_list_while_a_thread_is_pruned_reads_its_head_from_before(
    stores: tuple[SqliteThreads, SqliteThreads],
) -> None:
    reader, pruner = stores
    before = catalog.list_threads(pruner)
    errors = once_at(
        reader.conn,
        "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints",
        lambda: pruner.saver.prune(["a"], channels=channels()),
    )

    listed = catalog.list_threads(reader)

    assert not errors
    assert listed == before


def test_a_checkpoint_written_on_a_deleted_run_during_delete_for_runs_reads_back(
    stores: tuple[SqliteThreads, SqliteThreads], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, pruner = stores
    expected = reads(build_graph(writer.saver), "a")[0]
    continue_thread(writer, "a", run_id="doomed")
    materialise = pruning._materialise
    written: list[RunnableConfig] = []

    def and_write(*args: Any) -> None:  # the writer goes on from the run being deleted
        materialise(*args)
        if not written:
            written.append(continue_thread(writer, "a", run_id="kept"))

    monkeypatch.setattr(pruning, "_materialise", and_write)

    pruner.saver.delete_for_runs(["doomed"], channels=channels())

    fresh = SqliteThreads(writer.path)
    try:
        assert build_graph(fresh.saver).get_state(written[0]).values == expected
        runs = [t.metadata.get("run_id") for t in fresh.saver.list(thread("a"))]
        assert "doomed" not in runs and runs[0] == "kept"
    finally:
        fresh.close()
