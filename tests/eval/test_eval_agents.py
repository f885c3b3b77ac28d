"""Agents as evaluation methods (`--method rewoo`): the same harness, records and report."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from support import EVAL_DATA, PAGES, SpyModel, eval_args, snapshot_eval
from typer.testing import CliRunner

from wikireact import MemorySource
from wikireact.cli.app import app
from wikireact.errors import EvalError
from wikireact.eval.harness import EvalConfig
from wikireact.eval.run import run_eval
from wikireact.models.scripted import ScriptOutput
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.wiki.base import Disambiguation, Page

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


class CountingSource(MemorySource):
    """PAGES with a slow fetch; records the most fetches in flight at once."""

    def __init__(self) -> None:
        super().__init__(PAGES)
        self.in_flight = self.peak = 0
        self.lock = threading.Lock()

    def fetch(self, title: str) -> Page | Disambiguation | None:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        time.sleep(0.2)
        with self.lock:
            self.in_flight -= 1
        return super().fetch(title)


def test_questions_wait_for_their_fanned_out_searches_together(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    """A ReWOO round's Searches run on the graph's own threads: no question waits for another's."""
    dataset, _ = files
    source = CountingSource()
    two_searches = {q: SCRIPT["q1"] for q in SCRIPT}
    report = run_eval(
        EvalConfig(
            dataset=str(dataset),
            method="rewoo",
            model="scripted",
            wiki="memory",
            sample_seed=None,
            concurrency=4,
        ),
        tmp_path / "out",
        model=SpyModel(by_question=two_searches),
        wiki=source,
    )
    assert report["metrics"]["mean"]["model_calls"] == 2
    assert source.peak > 2, "only one question's Searches ran at a time"


def test_rewoo_exemplars_come_from_the_prompt_file_layout(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    model = SpyModel(by_question=SCRIPT)
    report = snapshot_eval(dataset, snapshot, tmp_path / "own", model, "rewoo", limit=1)
    assert report["settings"]["prompts_exemplars"] == {"rewoo_simple3": 3}
    assert report["settings"]["prompts_file"].endswith("rewoo.json")
    assert "#E1 = Search[Danube]" in model.prompts[0]

    prompts = tmp_path / "prompts.json"
    mine = (
        "Question: Who wrote Ulysses?\nPlan: Open the novel's page.\n#E1 = Search[Ulysses (novel)]"
    )
    prompts.write_text(json.dumps({"rewoo_mine": mine, "webthink_simple6": "unused"}))
    model = SpyModel(by_question=SCRIPT)
    report = snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "file",
        model,
        "rewoo",
        limit=1,
        prompts=str(prompts),
        prompts_keys=("rewoo_mine",),
    )
    assert report["settings"]["prompts_exemplars"] == {"rewoo_mine": 1}
    assert "Question: Who wrote Ulysses?" in model.prompts[0]
    assert "Danube" not in model.prompts[0]
