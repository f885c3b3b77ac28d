"""FEVER in `eval report`: accuracy and the paper's FEVER rows, never in a HotpotQA table; the browser; prompts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from support import (
    EVAL_DATA,
    EVAL_SCRIPT,
    FEVER_DATA,
    FEVER_PAGES,
    PAGES,
    SpyModel,
    flat,
    snapshot_eval,
    write_snapshot,
)
from typer.testing import CliRunner

from wikireact import ScriptedChatModel
from wikireact.cli.app import app
from wikireact.eval.html_report import page_data
from wikireact.eval.report import comparison_tables
from wikireact.eval.runs import load_runs
from wikireact.prompting.exemplars import load_prompts

runner = CliRunner()
FEVER_SCRIPT = {
    str(FEVER_DATA[0]["id"]): ["Action: Search[Nikolaj Coster-Waldau]", "Action: Finish[SUPPORTS]"],
    str(FEVER_DATA[1]["id"]): ["Action: Search[Stranger Things]", "Action: Finish[SUPPORTS]"],
    str(FEVER_DATA[2]["id"]): ["Action: Finish[NOT ENOUGH INFO]"],
}
PAPER_LAYOUT = {
    "webthink_simple3": "\nDetermine if there is Observation that SUPPORTS or REFUTES a Claim, or if "
    "there is NOT ENOUGH INFORMATION. \nClaim: Ostriches can fly.\nThought 1: I need to search "
    "Ostrich.\nAction 1: Search[Ostrich]\nObservation 1: The ostrich is a flightless bird.\n"
    "Thought 2:It cannot fly.\nAction 2:Finish[REFUTES]\n\nClaim: Paris is in France.\nThought 1:"
    "I search Paris.\nAction 1:Search[Paris]\nObservation 1: Paris is the capital of France.\n"
    "Thought 2:So it is.\nAction 2:Finish[SUPPORTS]\n\n",
    "webact_simple3": "\nDetermine if ... \nClaim: Ostriches can fly.\nAction 1: Search[Ostrich]\n"
    "Observation 1: The ostrich is a flightless bird.\nAction 2:Finish[REFUTES]\n\n",
    "cotqa_simple3": "Determine if ... \nClaim: Ostriches can fly.\nThought: The ostrich is "
    "flightless.\nAnswer:REFUTES\n\nClaim: Paris is in France.\nThought: It is its capital.\n"
    "Answer: SUPPORTS\n",
    "webqa_simple3": "Determine if ... \nClaim: Ostriches can fly.\nAnswer:REFUTES\n",
}
"""A prompt file in the layout of the paper's `fever.json` (its texts written for this test)."""


@pytest.fixture
def fever_and_hotpot_runs(tmp_path: Path) -> tuple[Path, Path]:
    """A finished FEVER run (Act) and a finished HotpotQA run (ReAct)."""
    claims = tmp_path / "claims.jsonl"
    claims.write_text("".join(json.dumps(r) + "\n" for r in FEVER_DATA))
    model = ScriptedChatModel(by_question=FEVER_SCRIPT)  # type: ignore[arg-type]
    fever_snapshot = write_snapshot(tmp_path / "fever.db", FEVER_PAGES)
    snapshot_eval(claims, fever_snapshot, tmp_path / "fever-act", model, "act", task="fever")
    questions = tmp_path / "dev.json"
    questions.write_text(json.dumps(EVAL_DATA))
    hotpot = ScriptedChatModel(outputs=EVAL_SCRIPT)
    snapshot_eval(questions, write_snapshot(tmp_path / "p.db", PAGES), tmp_path / "hp", hotpot)
    return tmp_path / "fever-act", tmp_path / "hp"


def test_report_paper_prints_the_papers_fever_rows_beside_a_fever_run(
    fever_and_hotpot_runs: tuple[Path, Path],
) -> None:
    fever, _ = fever_and_hotpot_runs
    result = runner.invoke(app, ["eval", "report", "--paper", str(fever)])
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    assert "wikireact evaluation: FEVER" in text and "acc" in text
    assert "66.7" in text  # 2 of 3 claims
    for score in ("57.1", "56.3", "60.4", "58.9", "60.9", "64.6", "62.0"):
        assert score in text
    for hotpot_only in ("28.7", "35.1", "EM only"):
        assert hotpot_only not in text
    assert "FEVER accuracy with PaLM-540B" in text
    assert "FEVER confusion" in text and "error categories (claims" in text
    # accuracy's bootstrap interval: of 3 claims, all wrong in 1/27 of resamples, all right in 8/27
    intervals = text.split("scores with 95% confidence intervals")[1]
    assert "acc" in intervals and "66.7" in intervals and "[0.0, 100.0]" in intervals
    assert "F1" not in intervals


def test_hotpotqa_and_fever_runs_are_never_in_one_table(
    fever_and_hotpot_runs: tuple[Path, Path],
) -> None:
    fever, hotpot = fever_and_hotpot_runs
    runs = load_runs([hotpot, fever])
    for wide in (False, True):
        tables = comparison_tables(runs, width=300, paper=True, wide=wide)
        assert [str(t.title) for t in tables] == [
            "wikireact evaluation",
            "wikireact evaluation: FEVER",
        ]
        console = Console(width=300, record=True)
        hotpot_table, fever_table = (_rendered(console, t) for t in tables)
        assert "fever-act" not in hotpot_table and "35.1" in hotpot_table
        assert "64.6" not in hotpot_table
        assert "hp\n" not in fever_table and "64.6" in fever_table and "35.1" not in fever_table
        assert ("P sup" in fever_table and "R nei" in fever_table) == wide
        assert "F1" not in fever_table and "F1" in hotpot_table
    result = runner.invoke(app, ["eval", "report", "--paper", str(hotpot), str(fever)])
    assert result.exit_code == 0, result.output
    assert "error categories (questions" in result.stdout
    assert "error categories (claims" in result.stdout


def _rendered(console: Console, table: object) -> str:
    console.print(table)
    return console.export_text()


def test_the_browser_shows_claims_and_labels_and_takes_one_task(
    fever_and_hotpot_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    fever, hotpot = fever_and_hotpot_runs
    data = page_data(load_runs([fever]), paper=True)
    assert data["task"] == "fever"
    assert data["paper"]["em"]["cot-sc-react"] == 64.6
    assert {q["gold"] for q in data["questions"]} == {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}
    assert any(q["question"].startswith("Nikolaj Coster-Waldau") for q in data["questions"])
    page = tmp_path / "fever.html"
    result = runner.invoke(app, ["eval", "report", str(fever), "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert 'const FEVER = D.task === "fever"' in page.read_text()
    mixed = runner.invoke(
        app, ["eval", "report", str(hotpot), str(fever), "--html", str(tmp_path / "m.html")]
    )
    assert mixed.exit_code == 2
    assert "--html shows runs of one task" in flat(mixed.stderr)


def test_the_plot_draws_fever_accuracy_and_refuses_mixed_tasks(
    fever_and_hotpot_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    fever, hotpot = fever_and_hotpot_runs
    plot = tmp_path / "fever.svg"
    result = runner.invoke(app, ["eval", "report", "--paper", str(fever), "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "FEVER accuracy per run" in plot.read_text()
    mixed = runner.invoke(
        app, ["eval", "report", str(hotpot), str(fever), "--plot", str(tmp_path / "m.svg")]
    )
    assert mixed.exit_code == 2 and "--plot draws runs of one task" in flat(mixed.stderr)


def test_a_prompt_file_in_the_papers_fever_layout_is_read(tmp_path: Path) -> None:
    path = tmp_path / "fever.json"
    path.write_text(json.dumps(PAPER_LAYOUT))
    prompts = load_prompts(path, ["react", "act", "cot", "standard"], task="fever")
    assert prompts.keys == {
        "act": "webact_simple3",
        "cot": "cotqa_simple3",
        "react": "webthink_simple3",
        "standard": "webqa_simple3",
    }
    react = load_prompts(path, ["react"], task="fever").episodes
    assert [e.question for e in react] == ["Ostriches can fly.", "Paris is in France."]
    assert [s.action for s in react[0].steps] == ["Search[Ostrich]", "Finish[REFUTES]"]
    assert react[0].steps[1].thought == "It cannot fly."
    cot = load_prompts(path, ["cot"], task="fever").qa
    assert [(q.question, q.answer) for q in cot] == [
        ("Ostriches can fly.", "REFUTES"),
        ("Paris is in France.", "SUPPORTS"),
    ]


@pytest.mark.parametrize("method", ["react", "cot"])
def test_an_eval_with_the_papers_fever_file_shows_its_exemplars(
    method: str, tmp_path: Path
) -> None:
    path = tmp_path / "fever.json"
    path.write_text(json.dumps(PAPER_LAYOUT))
    claims = tmp_path / "claims.jsonl"
    claims.write_text(json.dumps(FEVER_DATA[0]) + "\n")
    spy = SpyModel(outputs=["Thought: x.\nAction: Finish[SUPPORTS]\nAnswer: SUPPORTS"])
    report = snapshot_eval(
        claims,
        write_snapshot(tmp_path / "f.db", FEVER_PAGES),
        tmp_path / "out",
        spy,
        method,  # type: ignore[arg-type]
        task="fever",
        prompts=str(path),
    )
    prompt = spy.prompts[0]
    assert "Claim: Ostriches can fly." in prompt and "Claim: Paris is in France." in prompt
    assert re.search(r"Claim: Nikolaj Coster-Waldau worked with the Fox", prompt)
    assert "Question:" not in prompt
    assert (
        report["settings"]["prompts_keys"][method]
        == f"{'webthink' if method == 'react' else 'cotqa'}_simple3"
    )
    assert report["metrics"]["mean"]["accuracy"] == 1.0
