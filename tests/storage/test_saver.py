"""wikireact's checkpointer: LangGraph's conformance suite, old files, compact storage (deltas too)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from support import (
    AUDIT_TIMES,
    GOOD_RUN,
    MANY_PAGES,
    QUESTION,
    AsyncDelegating,
    distinct_steps,
    thread,
)

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.models.scripted import ScriptOutput
from wikireact.storage.materialise import delta_channels
from wikireact.storage.sqlite.codec import ZDICT, CompressingSerializer, pack_writes, unpack_writes
from wikireact.storage.sqlite.parent_deltas import CHAIN, ZP1
from wikireact.storage.sqlite.saver import CompactSqliteSaver
from wikireact.storage.sqlite.threads import _SCHEMA as threads_schema
from wikireact.storage.sqlite.threads import PAGE_SIZE, SqliteThreads
from wikireact.storage.sqlite.value_chunks import decode_refs


class AsyncCompactSaver(AsyncDelegating, CompactSqliteSaver):
    """The saver with async methods delegating to the sync ones (the suite calls only those)."""


def test_langgraph_checkpointer_conformance(tmp_path: Path) -> None:
    conformance = pytest.importorskip("langgraph.checkpoint.conformance")
    databases = iter(range(100))

    @conformance.checkpointer_test(name="CompactSqliteSaver")
    async def factory() -> AsyncIterator[CompactSqliteSaver]:
        conn = sqlite3.connect(tmp_path / f"c{next(databases)}.db", check_same_thread=False)
        yield AsyncCompactSaver(conn, serde=CompressingSerializer())
        conn.close()

    report = asyncio.run(conformance.validate(factory))
    failed = {name: r.failures for name, r in report.results.items() if r.passed is False}
    assert report.passed_all_base() and report.passed_all(), failed


class PreviousSaver(SqliteSaver):
    """The saver of earlier wikireact versions: the stock layout with integer versions."""

    def get_next_version(self, current: Any, channel: None) -> int:  # type: ignore[override]
        return 1 if current is None else int(current) + 1


def test_a_thread_written_by_the_previous_layout_resumes(
    tmp_path: Path, wiki: MemorySource
) -> None:
    db = tmp_path / "threads.db"
    model = ScriptedChatModel(outputs=GOOD_RUN, errors={2: TimeoutError("model timed out")})
    conn = sqlite3.connect(db, check_same_thread=False)
    conn.execute(threads_schema)  # a wikireact checkpoint file, as earlier versions created it
    previous = PreviousSaver(conn, serde=CompressingSerializer())
    with pytest.raises(Exception, match="did not answer step 3"):
        build_graph(previous, model=model, wiki=wiki).invoke({"question": QUESTION}, thread())
    assert conn.execute("SELECT count(*) FROM writes").fetchone()[0] > 0
    conn.close()

    store = SqliteThreads(db)  # moves the stock `writes` rows into `task_writes`
    assert store.conn.execute("SELECT count(*) FROM writes").fetchone()[0] == 0
    assert (
        store.conn.execute("SELECT count(*) FROM checkpoints WHERE snapshots IS NULL").fetchone()[0]
        > 8
    )
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    assert graph.get_state(thread()).values["steps"] == 2
    out = graph.invoke(None, thread())
    assert [s["action"] for s in out["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]
    store.close()


LONG_RUN: list[ScriptOutput] = [
    *(
        f"Thought: {k}.\nAction: {'Search[Ed Wood]' if k % 5 == 0 else f'Lookup[w{k % 3}]'}"
        for k in range(23)
    ),
    "Thought: done.\nAction: Finish[yes]",
]
"""24 steps: every delta channel passes its snapshot interval (16 writes) at least once."""


def untimed(value: Any) -> Any:
    """`value` without the wall-clock times the audit trail records (they differ between runs)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in AUDIT_TIMES}
    return [untimed(v) for v in value] if isinstance(value, list) else value


def test_history_and_states_equal_the_stock_savers(tmp_path: Path, wiki: MemorySource) -> None:
    def states(saver: Any) -> Iterator[tuple[Any, ...]]:
        graph = build_graph(saver, model=ScriptedChatModel(outputs=LONG_RUN), wiki=wiki)
        graph.invoke(
            {"question": QUESTION},
            thread(),
            durability="sync",
            context=Context(max_steps=30, repetition_limit=30),
        )
        yield from states_of(saver)

    stock = list(states(SqliteSaver(sqlite3.connect(tmp_path / "s.db", check_same_thread=False))))
    store = SqliteThreads(tmp_path / "o.db")
    ours = list(states(store.saver))
    assert ours == stock and len(ours) > 70 and ours[0][0]["steps"] == len(LONG_RUN)
    snapshots = store.conn.execute(
        "SELECT snapshots FROM checkpoints WHERE snapshots != ''"
    ).fetchall()
    assert {"trajectory", "usage", "current"} <= {
        name for (row,) in snapshots for name in row.split(",")
    }
    fresh = SqliteThreads(tmp_path / "o.db")  # no cache: read from the file alone
    assert list(states_of(fresh.saver)) == stock


def states_of(saver: Any) -> Iterator[tuple[Any, ...]]:
    for snap in build_graph(saver).get_state_history(thread()):
        yield untimed(snap.values), snap.next, snap.metadata["step"] if snap.metadata else None


def run_distinct(saver: Any, steps: int, fail_at: int | None = None) -> None:
    """Run `distinct_steps(steps)` on `saver`; the model fails at step `fail_at` if given."""
    errors = {} if fail_at is None else {fail_at - 1: TimeoutError("model timed out")}
    model = ScriptedChatModel(outputs=distinct_steps(steps), errors=errors)
    graph = build_graph(saver, model=model, wiki=MemorySource(MANY_PAGES))
    context = Context(max_steps=steps, repetition_limit=steps)
    try:
        graph.invoke({"question": QUESTION}, thread(), durability="sync", context=context)
    except Exception:
        if fail_at is None:
            raise


def test_snapshots_stored_in_pieces_read_back_exactly(tmp_path: Path) -> None:
    """Past CHUNK_ITEMS items a snapshot is stored in pieces; every state reads back the same.

    70 steps: two such snapshots of each growing channel, the second reusing the first's pieces.
    """
    stock_saver = SqliteSaver(sqlite3.connect(tmp_path / "s.db", check_same_thread=False))
    run_distinct(stock_saver, 70)
    stock = list(states_of(stock_saver))
    store = SqliteThreads(tmp_path / "o.db")
    run_distinct(store.saver, 70)
    assert list(states_of(store.saver)) == stock and stock[0][0]["steps"] == 70
    chunked = {
        channel
        for (refs,) in store.conn.execute("SELECT chunks FROM checkpoints WHERE chunks IS NOT NULL")
        for channel in decode_refs(refs)
    }
    assert {"trajectory", "usage", "audit", "proposals"} <= chunked
    assert list(states_of(SqliteThreads(tmp_path / "o.db").saver)) == stock  # from the file alone


def test_a_thread_saved_with_whole_snapshots_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of the version before `value_chunks` (whole snapshots, no `chunks` column)."""
    db = tmp_path / "threads.db"
    with monkeypatch.context() as patch:
        patch.setattr("wikireact.storage.sqlite.saver.chunkable", lambda value: False)
        store = SqliteThreads(db)
        run_distinct(store.saver, 60, fail_at=45)
        store.close()
    conn = sqlite3.connect(db)
    conn.executescript(
        "ALTER TABLE checkpoints DROP COLUMN chunks; DROP TABLE value_chunks; "
        "PRAGMA user_version = 1;"
    )
    conn.close()

    store = SqliteThreads(db)
    assert build_graph(store.saver).get_state(thread()).values["steps"] == 44
    run_distinct(store.saver, 60)
    stock_saver = SqliteSaver(sqlite3.connect(tmp_path / "s.db", check_same_thread=False))
    run_distinct(stock_saver, 60)
    ours = build_graph(store.saver).get_state(thread()).values
    assert untimed(ours) == untimed(build_graph(stock_saver).get_state(thread()).values)
    assert ours["steps"] == 60 and ours["status"] == "finished"
    assert store.conn.execute("SELECT count(*) FROM value_chunks").fetchone()[0] > 0


@pytest.mark.parametrize("size", [0, 10, 5000])
def test_packed_writes_round_trip(size: int) -> None:
    writes = [
        (0, "current", "msgpack", b"x" * size),
        (-3, "__interrupt__", "null", b""),
        (2, "trajectory", "msgpack+zlib", bytes(range(256)) * 3),
    ]
    assert unpack_writes(pack_writes(writes)) == writes


def test_repeated_writes_of_a_task_follow_the_stock_rules(tmp_path: Path) -> None:
    """Special writes (interrupts, errors) replace earlier ones; ordinary writes keep the first."""
    from langgraph.checkpoint.base import empty_checkpoint

    def pending(saver: BaseCheckpointSaver) -> list[Any]:
        config = saver.put(
            {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {}
        )
        saver.put_writes(config, [("a", 1), ("b", 2)], "task1")
        saver.put_writes(config, [("__interrupt__", "first")], "task1")
        saver.put_writes(config, [("a", 10), ("c", 3)], "task1")
        saver.put_writes(config, [("__interrupt__", "second")], "task1")
        saver.put_writes(config, [("a", 4)], "task0")
        found = saver.get_tuple(config)
        assert found is not None
        return found.pending_writes or []

    stock = pending(SqliteSaver(sqlite3.connect(tmp_path / "s.db", check_same_thread=False)))
    ours = pending(SqliteThreads(tmp_path / "o.db").saver)
    assert ours == stock
    assert ("task1", "__interrupt__", "second") in ours and ("task1", "a", 1) in ours


def test_checkpoints_stored_against_their_parent_read_back_exactly(tmp_path: Path) -> None:
    """Most rows are deltas against their parent's bytes, at most CHAIN - 1 in a row."""
    store = SqliteThreads(tmp_path / "o.db")
    run_distinct(store.saver, 40)
    types = [
        t for (t,) in store.conn.execute("SELECT type FROM checkpoints ORDER BY checkpoint_id")
    ]
    assert sum(t.endswith(ZP1) for t in types) > 0.8 * len(types)
    runs = "".join("d" if t.endswith(ZP1) else "k" for t in types).split("k")
    assert max(len(run) for run in runs) == CHAIN - 1
    stock_saver = SqliteSaver(sqlite3.connect(tmp_path / "s.db", check_same_thread=False))
    run_distinct(stock_saver, 40)
    assert list(states_of(SqliteThreads(tmp_path / "o.db").saver)) == list(states_of(stock_saver))


def test_a_checkpoint_rewritten_under_its_children_keeps_them_readable(tmp_path: Path) -> None:
    """Re-putting a checkpoint (as materialising does) first stores its delta children whole."""
    store = SqliteThreads(tmp_path / "o.db")
    run_distinct(store.saver, 12)
    before = list(states_of(store.saver))
    (parent_id,) = store.conn.execute(
        "SELECT parent_checkpoint_id FROM checkpoints WHERE type LIKE ? "
        "ORDER BY checkpoint_id LIMIT 1 OFFSET 10",
        ("%" + ZP1,),
    ).fetchone()
    saved = store.saver.get_tuple(
        {"configurable": {**thread()["configurable"], "checkpoint_id": parent_id}}
    )
    assert saved is not None and saved.parent_config is not None
    values = dict(reversed(saved.checkpoint["channel_values"].items()))  # other bytes, same value
    store.saver.put(
        saved.parent_config, {**saved.checkpoint, "channel_values": values}, saved.metadata, {}
    )
    assert list(states_of(SqliteThreads(tmp_path / "o.db").saver)) == before


def test_a_thread_pruned_by_another_process_continues_readably(
    tmp_path: Path, wiki: MemorySource
) -> None:
    """A writer never stores a delta against a parent whose row changed since it wrote it."""
    store = SqliteThreads(tmp_path / "o.db")
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread(), context=Context(max_steps=2))
    other = SqliteThreads(tmp_path / "o.db")  # another process: its own saver, its own caches
    other.saver.prune([thread()["configurable"]["thread_id"]], channels=delta_channels([graph]))
    graph.update_state(thread(), {"status": "running"}, as_node="observe")
    out = graph.invoke(None, thread(), context=Context(max_steps=5))
    assert out["answer"] == "yes"
    fresh = build_graph(SqliteThreads(tmp_path / "o.db").saver)
    assert [untimed(s.values) for s in fresh.get_state_history(thread())] == [
        untimed(s.values) for s in graph.get_state_history(thread())
    ]


def test_a_thread_stored_before_parent_deltas_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long thread of the version before `parent_deltas` (every blob zlib'd alone, streams
    against `ZDICT`) reads and resumes."""
    db = tmp_path / "threads.db"
    with monkeypatch.context() as patch:
        patch.setattr("wikireact.storage.sqlite.saver.plain_payload", lambda s, o: s.dumps_typed(o))
        patch.setattr("wikireact.storage.sqlite.parent_deltas.CHAIN", 1)
        patch.setattr("wikireact.storage.sqlite.codec.ZDICT_2", ZDICT)
        store = SqliteThreads(db)
        run_distinct(store.saver, 40, fail_at=30)
        store.close()
    old = {t for (t,) in sqlite3.connect(db).execute("SELECT type FROM checkpoints")}
    assert "msgpack+zlib" in old and not any(t.endswith(ZP1) for t in old)

    store = SqliteThreads(db)
    assert build_graph(store.saver).get_state(thread()).values["steps"] == 29
    run_distinct(store.saver, 40)
    stock_saver = SqliteSaver(sqlite3.connect(tmp_path / "s.db", check_same_thread=False))
    run_distinct(stock_saver, 40)
    assert list(states_of(SqliteThreads(db).saver)) == list(states_of(stock_saver))


def test_a_new_file_has_large_pages_and_an_old_file_keeps_its_own(tmp_path: Path) -> None:
    """8 KiB pages keep a page's text (~1.5 KB compressed) out of an overflow page of its own."""
    new = SqliteThreads(tmp_path / "new.db")
    assert new.conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 8192
    old = sqlite3.connect(tmp_path / "old.db")
    old.executescript("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;")  # an older file
    old.close()
    store = SqliteThreads(tmp_path / "old.db")
    assert store.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    run_distinct(store.saver, 8)
    assert build_graph(store.saver).get_state(thread()).values["steps"] == 8


def test_a_file_written_now_is_refused_in_one_line_by_the_version_before_parent_deltas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """That version read schema 2; its blobs stood alone, so it would fail on a delta with a raw
    zlib error. A file written now says schema 3, which it refuses before reading anything."""
    from wikireact.errors import ThreadsError
    from wikireact.storage.sqlite import threads as threads_module

    SqliteThreads(tmp_path / "t.db").close()
    monkeypatch.setattr(threads_module, "SCHEMA_VERSION", 2)
    with pytest.raises(ThreadsError, match="written by a newer wikireact"):
        SqliteThreads(tmp_path / "t.db")


def test_a_file_written_before_parent_deltas_reads_and_resumes(
    tmp_path: Path, wiki: MemorySource
) -> None:
    """tests/data/threads_before_parent_deltas.db: GOOD_RUN stopped at step 3 by the version
    before `parent_deltas` and `ZDICT_2` (blobs zlib'd alone, streams against `ZDICT`, 4 KiB
    pages); it reads, lists and resumes as a thread written today does."""
    db = tmp_path / "threads.db"
    db.write_bytes(
        (Path(__file__).parent.parent / "data" / "threads_before_parent_deltas.db").read_bytes()
    )
    store = SqliteThreads(db)
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    config = thread("before")
    old = [untimed(s.values) for s in graph.get_state_history(config)]
    assert old[0]["steps"] == 2 and len(old) == 10
    out = graph.invoke(None, config)
    assert out["answer"] == "yes" and [s["action"] for s in out["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]
    fresh = build_graph(SqliteThreads(db).saver)
    assert [untimed(s.values) for s in fresh.get_state_history(config)][-10:] == old
