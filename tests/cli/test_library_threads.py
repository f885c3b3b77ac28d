"""Threads run through the library are threads of the CLI too: `history`, `threads`, `resume`.

A thread run with `open_threads(DB).saver` (or LangGraph's stock `SqliteSaver` /
`PostgresSaver` on the same file or database) has no registry row: the CLI reads its
question, agent and settings from its checkpoints, says so in one line, and `resume`
continues it with the model, wiki and budget the checkpoints hold.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from support import GOOD_RUN, QUESTION, flat, thread, write_script
from typer.testing import CliRunner, Result

from wikireact import Context, build_graph, open_threads
from wikireact.agents import load_agent
from wikireact.cli.app import app
from wikireact.models.scripted import ScriptOutput

pytestmark = pytest.mark.usefixtures("data_dir", "wide_terminal")
runner = CliRunner()
NOTE = "read from its checkpoints"
"""What the CLI says of a thread it did not start."""
REWOO_PLAN = (
    "Plan: Scott Derrickson.\n#E1 = Search[Scott Derrickson]\nPlan: Ed Wood.\n#E2 = Search[Ed Wood]"
)
REWOO_ANSWER = "Thought: both are American.\nFinish[yes]"


def cli(*args: str) -> Result:
    return runner.invoke(app, list(args))


@contextmanager
def stock_saver(db: str) -> Iterator[BaseCheckpointSaver]:
    """LangGraph's own saver on the store `db` (created by wikireact first)."""
    open_threads(db).close()
    if db.startswith("postgresql://"):
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import connect
        from psycopg.rows import dict_row

        with connect(db, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
            yield PostgresSaver(conn)
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        yield SqliteSaver(conn)


@contextmanager
def library_saver(db: str, writer: str) -> Iterator[BaseCheckpointSaver]:
    if writer == "stock":
        with stock_saver(db) as saver:
            yield saver
        return
    with closing(open_threads(db)) as store:
        yield store.saver


@pytest.fixture(params=["open_threads", "stock"])
def library_thread(
    request: pytest.FixtureRequest, db_target: str, tmp_path: Path, snapshot_db: Path
) -> str:
    """`db_target` holding thread g1, run 2 of GOOD_RUN's 4 steps by the library (out of budget)."""
    context = Context(
        model=write_script(tmp_path, GOOD_RUN, "library.json"), wiki=str(snapshot_db), max_steps=2
    )
    with library_saver(db_target, request.param) as saver:
        out = build_graph(saver).invoke({"question": QUESTION}, thread("g1"), context=context)
    assert (out["status"], out["steps"]) == ("budget_exhausted", 2)
    return db_target


def test_history_and_threads_show_read_a_library_thread(library_thread: str) -> None:
    as_json = cli("history", "g1", "--db", library_thread, "--json")
    shown = cli("threads", "show", "g1", "--db", library_thread)

    assert as_json.exit_code == 0, as_json.output
    record = json.loads(as_json.stdout)
    assert (record["question"], record["status"], len(record["steps"])) == (
        QUESTION,
        "budget_exhausted",
        2,
    )
    assert record["settings"]["max_steps"] == 2
    assert shown.exit_code == 0, shown.output
    assert QUESTION in flat(shown.stdout) and "Checkpoints, newest first" in shown.stdout
    assert NOTE in flat(shown.stderr) and len(shown.stderr.strip().splitlines()) == 1


def test_threads_list_shows_a_library_thread_with_its_question(library_thread: str) -> None:
    result = cli("threads", "list", "--db", library_thread, "--json")

    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert (row["thread_id"], row["agent"], row["task"], row["question"]) == (
        "g1",
        "react",
        "hotpotqa",
        QUESTION,
    )
    assert (row["status"], row["steps"]) == ("budget_exhausted", 2)


def test_resume_continues_a_library_thread_with_its_settings(library_thread: str) -> None:
    result = cli("resume", "g1", "--db", library_thread, "--max-steps", "5", "--json")

    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["answer"], out["status"], out["steps"]) == ("yes", "finished", 4)
    assert NOTE in flat(result.stderr)
    again = json.loads(cli("history", "g1", "--db", library_thread, "--json").stdout)
    assert again["settings"]["max_steps"] == 5 and again["status"] == "finished"


@pytest.mark.parametrize("graph_name", ["wikireact-rewoo", "renamed"])
def test_a_library_thread_of_another_agent_is_shown_with_its_agent(
    graph_name: str, tmp_path: Path, snapshot_db: Path
) -> None:
    """The agent is named in the checkpoints' metadata, or else told by their channels."""
    db = str(tmp_path / "threads.db")
    script: list[ScriptOutput] = [REWOO_PLAN, REWOO_ANSWER]
    context = Context(model=write_script(tmp_path, script, "rewoo.json"), wiki=str(snapshot_db))
    with closing(open_threads(db)) as store:
        graph = load_agent("rewoo").build_graph(store.saver).copy(update={"name": graph_name})
        assert (
            graph.invoke({"question": QUESTION}, thread("g1"), context=context)["answer"] == "yes"
        )

    [row] = json.loads(cli("threads", "list", "--db", db, "--json").stdout)
    shown = cli("history", "g1", "--db", db)

    assert (row["agent"], row["question"], row["status"]) == ("rewoo", QUESTION, "finished")
    assert shown.exit_code == 0, shown.output
    assert "(rewoo)" in flat(shown.stderr) and "Search[Ed Wood]" in flat(shown.stdout)
