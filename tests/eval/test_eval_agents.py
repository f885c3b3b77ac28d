"""Agents as evaluation methods (`--method rewoo`): the same harness, records and report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import EVAL_DATA, SpyModel, eval_args, snapshot_eval
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.errors import EvalError
from wikireact.eval.harness import EvalConfig
from wikireact.models.scripted import ScriptOutput
from wikireact.storage.sqlite.threads import SqliteThreads

PLANS = {
    "q1": "Plan: a.\n#E1 = Search[Scott Derrickson]\nPlan: b.\n#E2 = Search[Ed Wood]",
    "q2": "Plan: a.\n#E1 = Search[Ed Wood]\nPlan: b.\n#E2 = Lookup[born]",
    "q3": "Plan: a.\n#E1 = Search[Scott Derrickson]\nPlan: b.\n#E2 = Lookup[lives]",
    "q4": "Plan: a.\n#E1 = Search[Ed Wood]",
}
ANSWERS = {"q1": "yes", "q2": "Poughkeepsie, New York", "q3": "Los Angeles", "q4": "yes"}
SCRIPT: dict[str, list[ScriptOutput]] = {
    q: [PLANS[q], f"Thought: done.\nFinish[{ANSWERS[q]}]"] for q in PLANS
}


def test_eval_method_rewoo_records_each_question(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    model = SpyModel(by_question=SCRIPT)
    out = tmp_path / "rewoo"
    report = snapshot_eval(dataset, snapshot, out, model, "rewoo")
    records = {
        r["id"]: r for r in map(json.loads, (out / "trajectories.jsonl").read_text().splitlines())
    }
    assert set(records) == {"q1", "q2", "q3", "q4"}
    assert len(model.calls) == 8
    for qid, record in records.items():
        assert record["method"] == "rewoo" and record["status"] == "finished"
        assert record["model_calls"] == 2, qid
        assert record["answer"] == ANSWERS[qid]
        assert record["trajectory"][0]["kind"] == "plan"
        assert record["plan"] and record["evidence"]["#E1"]  # the agent's own outputs
        assert record["input_tokens"] > 0 and record["wiki_requests"] >= 1
    assert [records[q]["em"] for q in ("q1", "q2", "q3", "q4")] == [1.0, 1.0, 1.0, 0.0]
    assert report["settings"]["method"] == "rewoo"
    assert report["metrics"]["mean"]["model_calls"] == 2
    store = SqliteThreads(out / "threads.db")
    try:
        assert store.agent("rewoo/0/q1") == "rewoo"
        assert store.question("rewoo/0/q1") == EVAL_DATA[0]["question"]
    finally:
        store.close()
    # resumed after it ended: nothing runs again, the records stay
    again = snapshot_eval(
        dataset, snapshot, out, SpyModel(by_question=SCRIPT), "rewoo", resume=True
    )
    assert again["metrics"] == report["metrics"]


def test_rewoo_with_the_tools_protocol_is_refused(files: tuple[Path, Path]) -> None:
    dataset, snapshot = files
    with pytest.raises(EvalError, match="--protocol tools applies to methods that run episodes"):
        EvalConfig(
            dataset=str(dataset),
            method="rewoo",
            model="scripted",
            wiki=str(snapshot),
            protocol="tools",
        )


def test_cli_eval_method_rewoo(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, [*eval_args(dataset, snapshot, script, out), "--method", "rewoo"]
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert {r["method"] for r in records} == {"rewoo"}
    assert [r["model_calls"] for r in records] == [2, 2, 2, 2]
    assert json.loads((out / "report.json").read_text())["metrics"]["mean"]["em"] == 0.75
