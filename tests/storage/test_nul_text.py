"""Text holding U+0000 (NUL): stored losslessly in episodes, refused at the door as an id.

PostgreSQL's `text` and `jsonb` cannot hold NUL, and the stock `PostgresSaver` keeps a
channel's text value in `jsonb`. wikireact's saver keeps such a value in the blobs table
instead, serialized as the stock serializer serializes a string. A dataset's question ids and
questions name threads and registry rows (`text` columns): a NUL there is refused in one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import PAGES, QUESTION, flat, thread, write_script
from typer.testing import CliRunner

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.cli.app import app
from wikireact.models.scripted import ScriptOutput
from wikireact.storage.threads import open_threads

runner = CliRunner()
NUL_ANSWER = "Pough\u0000keepsie"
NUL_RUN: list[ScriptOutput] = [
    "Thought: look.\nAction: Search[Ed Wood]",
    f"Thought: found it.\nAction: Finish[{NUL_ANSWER}]",
]


def final_values(db: str, thread_id: str) -> dict[str, Any]:
    store = open_threads(db)
    try:
        return dict(build_graph(store.saver).get_state(thread(thread_id)).values)
    finally:
        store.close()


def test_an_answer_with_nul_is_saved_and_read_back_on_both_stores(
    tmp_path: Path, snapshot_db: Path, db_target: str, data_dir: Path
) -> None:
    asked = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--model",
            write_script(tmp_path, NUL_RUN),
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "nul",
            "--db",
            db_target,
            "--json",
        ],
    )
    assert asked.exit_code == 0, asked.output
    assert json.loads(asked.stdout)["answer"] == NUL_ANSWER
    values = final_values(db_target, "nul")
    assert values["answer"] == NUL_ANSWER and values["status"] == "finished"
    assert values["trajectory"][-1]["action"] == f"Finish[{NUL_ANSWER}]"
    shown = runner.invoke(app, ["history", "nul", "--db", db_target, "--json"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["answer"] == NUL_ANSWER
    again = runner.invoke(app, ["resume", "nul", "--db", db_target, "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout.strip().splitlines()[-1])["answer"] == NUL_ANSWER


def test_nul_text_reads_back_the_same_from_postgresql_and_sqlite(
    tmp_path: Path, pg_url: str
) -> None:
    question = "Where was Ed\u0000Wood born?"
    finals = {}
    for db in (pg_url, str(tmp_path / "threads.db")):
        store = open_threads(db)
        try:
            graph = build_graph(
                store.saver, model=ScriptedChatModel(outputs=NUL_RUN), wiki=MemorySource(PAGES)
            )
            graph.invoke({"question": question}, thread("t"))
        finally:
            store.close()
        finals[db] = final_values(db, "t")
    pg, sqlite = finals[pg_url], finals[str(tmp_path / "threads.db")]
    assert pg["question"] == question and pg["answer"] == NUL_ANSWER
    for values in (pg, sqlite):  # the model call's wall time differs from run to run
        (values.get("current") or {}).pop("model_seconds", None)
    assert {k: v for k, v in pg.items() if k != "audit"} == {
        k: v for k, v in sqlite.items() if k != "audit"
    }


@pytest.mark.parametrize("field", ["_id", "question"])
def test_a_nul_in_a_dataset_id_or_question_is_refused_in_one_line(
    tmp_path: Path, snapshot_db: Path, pg_url: str, field: str
) -> None:
    item = {"_id": "q1", "question": "Where was Ed Wood born?", "answer": "Poughkeepsie"}
    item[field] = item[field].replace("1", "\u0000").replace("Ed ", "Ed\u0000")
    dataset = tmp_path / "dev.json"
    dataset.write_text(json.dumps([item]))
    script = tmp_path / "script.json"
    script.write_text(json.dumps(NUL_RUN))
    for extra in ([], ["--db", pg_url, "--run", "nul"]):
        result = runner.invoke(
            app,
            [
                "eval",
                str(dataset),
                "--model",
                f"scripted:{script}",
                "--wiki",
                str(snapshot_db),
                "--out",
                str(tmp_path / "out"),
                *extra,
            ],
        )
        assert result.exit_code == 2, result.output
        message = flat(result.stderr)
        assert f"item 0 has a NUL character (U+0000) in its {field}" in message, message
        assert "unexpected" not in message and len(result.stderr.strip().splitlines()) <= 3
