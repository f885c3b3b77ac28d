"""The PostgreSQL store's packed layout reads back what LangGraph's `PostgresSaver` reads.

`NulSafePostgresSaver` packs a task's writes in one row, keeps versions and delta counters
compressed, and stores large delta snapshots in shared pieces
(`wikireact.storage.postgres.layout`). A 60-step episode passes the pieces' size (32
items) and the snapshot interval several times, so its checkpoints hold snapshots in
pieces and delta channels rebuilt from ancestors. Threads the stock saver wrote (the
stock layout) still read, and continue, through the packed saver.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple, empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from support import AUDIT_TIMES, MANY_PAGES, QUESTION, distinct_steps, thread
from typer.testing import CliRunner

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.cli.app import app
from wikireact.errors import ModelCallError, ThreadsError
from wikireact.storage.materialise import delta_channels
from wikireact.storage.postgres import layout
from wikireact.storage.postgres.deltas import DELTA, Payloads
from wikireact.storage.postgres.saver import NulSafePostgresSaver
from wikireact.storage.serde import StrictSerializer
from wikireact.storage.sqlite._langgraph import DeltaSnapshot
from wikireact.storage.sqlite.codec import dump_metadata

STEPS = 60


@pytest.fixture
def stock(pg_url: str) -> Iterator[PostgresSaver]:
    """The stock saver on the test's database (its own connection)."""
    with psycopg.connect(
        pg_url, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        saver = PostgresSaver(conn, serde=StrictSerializer())
        saver.setup()
        yield saver


@pytest.fixture
def packed(pg_url: str, stock: PostgresSaver) -> Iterator[NulSafePostgresSaver]:
    """The store's saver on the same database (set up after the stock one)."""
    with psycopg.connect(
        pg_url, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        saver = NulSafePostgresSaver(conn)
        saver.setup()
        yield saver


def run(saver: BaseCheckpointSaver, thread_id: str, *, fail_at: int | None = None) -> Any:
    """Run the 60-step episode on a thread (the model failing at step `fail_at`); return the graph."""
    errors = {fail_at: ConnectionError("down")} if fail_at is not None else {}
    model = ScriptedChatModel(outputs=distinct_steps(STEPS), errors=errors)
    graph = build_graph(saver, model=model, wiki=MemorySource(MANY_PAGES))
    try:
        graph.invoke(
            {"question": QUESTION},
            thread(thread_id),
            context=Context(max_steps=STEPS, repetition_limit=STEPS),
        )
    except ModelCallError:
        pass
    return graph


def comparable(value: Any) -> Any:
    """A state's values without the wall-clock fields (`AUDIT_TIMES`) that differ between runs."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in AUDIT_TIMES}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def history(graph: Any, thread_id: str) -> list[tuple[Any, ...]]:
    """Every checkpoint of a thread as a reader sees it, minus ids and times."""
    return [
        (comparable(s.values), s.next, {k: v for k, v in s.metadata.items() if k != "run_id"})
        for s in graph.get_state_history(thread(thread_id))
    ]


def same_tuples(a: CheckpointTuple, b: CheckpointTuple) -> None:
    """Assert two saved checkpoints are the same but for their thread id."""
    assert a.checkpoint == b.checkpoint
    assert a.metadata == b.metadata
    assert a.pending_writes == b.pending_writes
    assert (a.parent_config or {}).get("configurable", {}).get("checkpoint_id") == (
        b.parent_config or {}
    ).get("configurable", {}).get("checkpoint_id")


def test_a_packed_thread_reads_back_as_the_stock_saver_reads_the_same_checkpoints(
    stock: PostgresSaver, packed: NulSafePostgresSaver
) -> None:
    graph = run(stock, "s", fail_at=STEPS - 5)
    saved = [*stock.list(thread("s"))][::-1]
    for item in saved:  # the very checkpoints and writes, saved again by the packed saver
        parent = item.parent_config["configurable"]["checkpoint_id"] if item.parent_config else None
        config: RunnableConfig = {
            "configurable": {"thread_id": "p", "checkpoint_ns": "", "checkpoint_id": parent}
        }
        earlier = stock.get_tuple(item.parent_config) if item.parent_config else None
        before = earlier.checkpoint["channel_versions"] if earlier else {}
        versions = item.checkpoint["channel_versions"]
        new = {k: v for k, v in versions.items() if before.get(k) != v}
        stored = packed.put(config, item.checkpoint, item.metadata, new)
        by_task: dict[str, list[tuple[str, Any]]] = {}
        for task_id, channel, value in item.pending_writes or []:
            by_task.setdefault(task_id, []).append((channel, value))
        for task_id, writes in by_task.items():
            packed.put_writes(stored, writes, task_id)
    with packed._cursor() as cur:
        cur.execute(f"SELECT count(*) AS n FROM {layout.PIECES} WHERE thread_id = 'p'")
        pieces = cur.fetchone()
        assert pieces is not None and pieces["n"] > 0
        cur.execute("SELECT count(*) AS n FROM checkpoint_writes WHERE thread_id = 'p'")
        stock_rows = cur.fetchone()
        assert stock_rows is not None and stock_rows["n"] == 0
    for a, b in zip([*stock.list(thread("s"))], [*packed.list(thread("p"))], strict=True):
        same_tuples(a, b)
        channels = sorted(delta_channels([graph]))
        assert stock.get_delta_channel_history(
            config=a.config, channels=channels
        ) == packed.get_delta_channel_history(config=b.config, channels=channels)
    same_tuples(stock.get_tuple(thread("s")), packed.get_tuple(thread("p")))  # type: ignore[arg-type]


def test_a_packed_episode_reads_and_resumes_as_a_stock_one(
    stock: PostgresSaver, packed: NulSafePostgresSaver
) -> None:
    on_stock, on_packed = run(stock, "s", fail_at=STEPS - 5), run(packed, "p", fail_at=STEPS - 5)
    assert history(on_packed, "p") == history(on_stock, "s")
    assert comparable(on_packed.get_state(thread("p")).values) == comparable(
        on_stock.get_state(thread("s")).values
    )
    model = ScriptedChatModel(outputs=distinct_steps(STEPS))
    context = Context(max_steps=STEPS, repetition_limit=STEPS)
    finals = [
        build_graph(saver, model=model, wiki=MemorySource(MANY_PAGES)).invoke(
            None, thread(thread_id), context=context
        )
        for saver, thread_id in ((stock, "s"), (packed, "p"))
    ]
    assert finals[0]["status"] == "finished" and finals[0]["steps"] == STEPS
    assert comparable(finals[1]) == comparable(finals[0])


def test_a_thread_in_the_stock_layout_reads_and_continues_through_the_packed_saver(
    stock: PostgresSaver, packed: NulSafePostgresSaver
) -> None:
    run(stock, "s", fail_at=STEPS - 5)
    for a, b in zip([*stock.list(thread("s"))], [*packed.list(thread("s"))], strict=True):
        same_tuples(a, b)
        assert a.config == b.config
    graph = build_graph(packed, model=ScriptedChatModel(outputs=[]), wiki=MemorySource(MANY_PAGES))
    assert history(graph, "s") == history(build_graph(stock, wiki=MemorySource(MANY_PAGES)), "s")
    model = ScriptedChatModel(outputs=distinct_steps(STEPS))
    final = build_graph(packed, model=model, wiki=MemorySource(MANY_PAGES)).invoke(
        None, thread("s"), context=Context(max_steps=STEPS, repetition_limit=STEPS)
    )
    assert final["status"] == "finished" and final["steps"] == STEPS
    assert len(final["trajectory"]) == STEPS


def layout_1(saver: NulSafePostgresSaver, thread_id: str) -> int:
    """Rewrite a thread's rows as packed layout 1 stored them; return how many were deltas.

    Layout 1 kept every inline value, the id and `v` in the `checkpoint` jsonb and each
    row's versions and delta counters alone in `packed` (`dump_metadata`).
    """
    with saver._cursor() as cur:
        rows = cur.execute(
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint, packed FROM checkpoints "
            "WHERE thread_id = %s",
            (thread_id,),
        ).fetchall()
        payloads = Payloads(cur, thread_id, "")
        payloads.add({r["checkpoint_id"]: (r["parent_checkpoint_id"], r["packed"]) for r in rows})
        for r in rows:
            payload = payloads.payload(r["checkpoint_id"])
            assert payload is not None
            rest = dict(payload["checkpoint"])
            values = {**payload["values"], **r["checkpoint"]["channel_values"]}
            jsonb = {"v": rest.pop("v"), "id": r["checkpoint_id"], "ts": r["checkpoint"]["ts"]}
            cur.execute(
                "UPDATE checkpoints SET checkpoint = %s, packed = %s WHERE thread_id = %s "
                "AND checkpoint_id = %s",
                (
                    Jsonb({**jsonb, "channel_values": values}),
                    dump_metadata({"checkpoint": rest, "metadata": payload["metadata"]}),
                    thread_id,
                    r["checkpoint_id"],
                ),
            )
    return sum(bytes(r["packed"][:1]) == DELTA for r in rows)


@pytest.fixture
def fresh(pg_url: str, packed: NulSafePostgresSaver) -> Iterator[NulSafePostgresSaver]:
    """Another saver on the database, as another process would open it (remembering nothing)."""
    with psycopg.connect(
        pg_url, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        saver = NulSafePostgresSaver(conn)
        saver.setup()
        yield saver


def test_a_thread_written_in_layout_1_reads_and_continues(
    packed: NulSafePostgresSaver, fresh: NulSafePostgresSaver
) -> None:
    graph = run(packed, "p", fail_at=STEPS - 5)
    before = history(graph, "p")
    assert layout_1(packed, "p") > STEPS  # most rows were stored against their parent's
    on_layout_1 = build_graph(
        fresh, model=ScriptedChatModel(outputs=[]), wiki=MemorySource(MANY_PAGES)
    )
    assert history(on_layout_1, "p") == before
    model = ScriptedChatModel(outputs=distinct_steps(STEPS))
    final = build_graph(fresh, model=model, wiki=MemorySource(MANY_PAGES)).invoke(
        None, thread("p"), context=Context(max_steps=STEPS, repetition_limit=STEPS)
    )
    assert final["status"] == "finished" and len(final["trajectory"]) == STEPS
    assert history(on_layout_1, "p")[-len(before) :] == before


def test_a_checkpoint_saved_again_leaves_its_children_readable(
    packed: NulSafePostgresSaver,
) -> None:
    run(packed, "p", fail_at=STEPS - 5)
    saved = [*packed.list(thread("p"))][::-1]
    with packed._cursor() as cur:  # a checkpoint whose child is stored against it
        cur.execute(
            "SELECT parent_checkpoint_id AS id FROM checkpoints WHERE thread_id = 'p' "
            "AND substring(packed FROM 1 FOR 1) = %s ORDER BY checkpoint_id LIMIT 1 OFFSET 20",
            (DELTA,),
        )
        parent = cur.fetchone()
    assert parent is not None
    middle = next(t for t in saved if t.config["configurable"]["checkpoint_id"] == parent["id"])
    assert middle.parent_config is not None
    changed = middle.checkpoint.copy()
    changed["versions_seen"] = {"someone": {"something": 1}}
    packed.put(middle.parent_config, changed, middle.metadata, {})
    after = {t.config["configurable"]["checkpoint_id"]: t for t in packed.list(thread("p"))}
    assert after[middle.config["configurable"]["checkpoint_id"]].checkpoint == changed
    for item in saved:
        if item is not middle:
            same_tuples(after[item.config["configurable"]["checkpoint_id"]], item)


def test_a_database_a_newer_layout_wrote_is_refused_in_one_line(
    pg_url: str, packed: NulSafePostgresSaver, data_dir: Path
) -> None:
    run(packed, "p", fail_at=STEPS - 5)
    with packed._cursor() as cur:
        cur.execute(f"UPDATE {layout.LAYOUT_TABLE} SET version = %s", (layout.LAYOUT_VERSION + 1,))
        rows = cur.execute("SELECT count(*) AS n FROM checkpoints").fetchone()
    for args in (["list"], ["prune", "--all"]):
        result = CliRunner().invoke(app, ["threads", *args, "--db", pg_url])
        assert result.exit_code != 0
        assert result.output.strip().count("\n") == 0, result.output
        assert "newer wikireact (packed layout 3, this one reads 2)" in result.output
    with packed._cursor() as cur:
        assert cur.execute("SELECT count(*) AS n FROM checkpoints").fetchone() == rows


def test_pieces_commit_with_their_checkpoint(packed: NulSafePostgresSaver) -> None:
    with packed._cursor() as cur:  # the first checkpoint holding pieces fails to save
        cur.execute(
            "CREATE FUNCTION fail_save() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'the disk is full'; END $$"
        )
        cur.execute(
            "CREATE TRIGGER fail_save BEFORE INSERT ON checkpoint_blobs FOR EACH ROW "
            f"WHEN (NEW.type = '{layout.PIECES_TYPE}') EXECUTE FUNCTION fail_save()"
        )
    with pytest.raises(psycopg.Error, match="the disk is full"):
        run(packed, "p")
    with packed._cursor() as cur:
        orphans = cur.execute(f"SELECT count(*) AS n FROM {layout.PIECES}").fetchone()
        assert orphans == {"n": 0}
        cur.execute("DROP TRIGGER fail_save ON checkpoint_blobs")
    model = ScriptedChatModel(outputs=distinct_steps(STEPS))
    final = build_graph(packed, model=model, wiki=MemorySource(MANY_PAGES)).invoke(
        None, thread("p"), context=Context(max_steps=STEPS, repetition_limit=STEPS)
    )
    assert final["status"] == "finished" and len(final["trajectory"]) == STEPS


def test_pieces_another_process_deleted_are_stored_again(
    packed: NulSafePostgresSaver, fresh: NulSafePostgresSaver
) -> None:
    items = list(range(100))
    first = empty_checkpoint()
    first["channel_values"] = {"trajectory": DeltaSnapshot(items)}
    first["channel_versions"] = {"trajectory": 1}
    config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    stored = packed.put(config, first, {}, {"trajectory": 1})
    fresh.prune(["t"], strategy="delete")  # another process removes what used the pieces
    second = empty_checkpoint()
    second["channel_values"] = {"trajectory": DeltaSnapshot([*items, 100])}
    second["channel_versions"] = {"trajectory": 2}
    latest = packed.put(stored, second, {}, {"trajectory": 2})
    read = fresh.get_tuple(latest)
    assert read is not None
    assert read.checkpoint["channel_values"]["trajectory"].value == [*items, 100]


def test_copying_onto_a_thread_that_exists_is_refused_unchanged(
    packed: NulSafePostgresSaver,
) -> None:
    graph = run(packed, "a")
    packed.copy_thread("a", "b")
    packed.prune(["b"], channels=delta_channels([graph]))  # copied, then pruned
    kept = [(t.config, t.checkpoint) for t in packed.list(thread("b"))]

    with pytest.raises(ThreadsError, match="'b' already has checkpoints") as caught:
        packed.copy_thread("a", "b")

    assert "\n" not in str(caught.value)
    assert [(t.config, t.checkpoint) for t in packed.list(thread("b"))] == kept
    assert graph.get_state(thread("b")).values == graph.get_state(thread("a")).values
