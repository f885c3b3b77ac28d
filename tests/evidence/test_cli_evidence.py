"""`wikireact ask` shows the answer's evidence; `--json` and `history --json` carry it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import ask_args, eval_args, flat
from typer.testing import CliRunner

from wikireact.cli.app import app

runner = CliRunner()
BORN = [
    "Thought 1: Find him.\nAction 1: Search[Ed Wood]",
    "Thought 2: There.\nAction 2: Finish[Poughkeepsie, New York]",
]
GUESS = [
    "Thought 1: Find him.\nAction 1: Search[Ed Wood]",
    "Thought 2: I recall Chicago.\nAction 2: Finish[Chicago]",
    "Thought 3: I keep it.\nAction 3: Finish[Chicago]",
]


def test_the_live_view_prints_the_evidence_after_the_answer(
    tmp_path: Path, snapshot_db: Path
) -> None:
    result = runner.invoke(app, ask_args(snapshot_db, tmp_path, BORN))
    assert result.exit_code == 0, result.output
    shown = flat(result.stdout)
    assert (
        'Answer: Poughkeepsie, New York Evidence: [Ed Wood] sentence 2: "Wood was born in Poughkeepsie, New York."'
        in shown
    )


def test_json_and_the_audit_trail_carry_the_citations(tmp_path: Path, snapshot_db: Path) -> None:
    asked = runner.invoke(
        app, [*ask_args(snapshot_db, tmp_path, BORN), "--json", "--thread-id", "e1"]
    )
    assert asked.exit_code == 0, asked.output
    out = json.loads(asked.stdout)
    assert out["supported"] is True
    (citation,) = out["citations"]
    assert (citation["step"], citation["title"], citation["sentence_index"]) == (1, "Ed Wood", 2)
    assert citation["sentence"][citation["start"] : citation["end"]] == "Poughkeepsie, New York"
    history = runner.invoke(app, ["history", "e1", "--json"])
    assert history.exit_code == 0, history.output
    trail = json.loads(history.stdout)
    assert trail["citations"] == out["citations"] and trail["supported"] is True


def test_ask_verifies_a_finish_by_default_and_says_when_nothing_supports_it(
    tmp_path: Path, snapshot_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WIKIREACT_VERIFY_FINISH")
    asked = runner.invoke(app, [*ask_args(snapshot_db, tmp_path, GUESS), "--json"])
    assert asked.exit_code == 0, asked.output
    out = json.loads(asked.stdout)
    assert [s["kind"] for s in out["trajectory"]] == ["executed", "unverified", "finish"]
    assert (out["answer"], out["supported"], out["citations"]) == ("Chicago", False, [])
    shown = flat(runner.invoke(app, ask_args(snapshot_db, tmp_path, GUESS, "g2.json")).stdout)
    assert "Chicago appears in no observation so far" in shown
    assert "Evidence: none: the answer appears in no observation" in shown


def test_ask_no_verify_finish_ends_at_the_first_finish(
    tmp_path: Path, snapshot_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WIKIREACT_VERIFY_FINISH")
    args = [*ask_args(snapshot_db, tmp_path, GUESS), "--json", "--no-verify-finish"]
    out = json.loads(runner.invoke(app, args).stdout)
    assert (out["steps"], out["answer"], out["supported"]) == (2, "Chicago", False)


@pytest.mark.parametrize(("flag", "steps"), [([], 2), (["--verify-finish"], 3)])
def test_eval_runs_the_papers_protocol_unless_asked_and_records_the_setting(
    files: tuple[Path, Path], tmp_path: Path, flag: list[str], steps: int
) -> None:
    dataset, snapshot = files
    script = tmp_path / "guess.json"
    script.write_text(json.dumps({"outputs": GUESS}))
    out = tmp_path / "out"
    result = runner.invoke(app, [*eval_args(dataset, snapshot, script, out), *flag])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["verify_finish"] is bool(flag)
    assert report["metrics"]["mean"]["mean_steps"] == steps
