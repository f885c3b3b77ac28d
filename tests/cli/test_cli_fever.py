"""`wikireact ask --task fever CLAIM`: the claim is checked and the label printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import CLAIM, FEVER_PAGES, FEVER_RUN, flat, write_script, write_snapshot
from typer.testing import CliRunner

from wikireact.cli.app import app

runner = CliRunner()


@pytest.fixture
def fever_args(tmp_path: Path, data_dir: Path) -> list[str]:
    snapshot = write_snapshot(tmp_path / "fever.db", FEVER_PAGES)
    return ["--model", write_script(tmp_path, FEVER_RUN), "--wiki", str(snapshot)]


def test_ask_task_fever_prints_the_label(fever_args: list[str]) -> None:
    result = runner.invoke(app, ["ask", "--task", "fever", CLAIM, *fever_args])
    assert result.exit_code == 0, result.output
    assert "Answer: SUPPORTS" in flat(result.output)
    assert "Action 2: Finish[SUPPORTS]" in flat(result.output)


def test_ask_task_fever_json_and_the_thread_remembers_the_task(fever_args: list[str]) -> None:
    result = runner.invoke(
        app, ["ask", "--task", "fever", CLAIM, "--json", "--thread-id", "c1", *fever_args]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["answer"] == "SUPPORTS"
    history = runner.invoke(app, ["history", "c1", "--json"])
    assert history.exit_code == 0, history.output
    assert json.loads(history.stdout)["settings"]["task"] == "fever"
    transcript = runner.invoke(app, ["history", "c1"])
    assert f"Claim: {CLAIM}" in flat(transcript.output)


def test_a_hotpotqa_ask_keeps_the_answer_as_written(fever_args: list[str]) -> None:
    result = runner.invoke(app, ["ask", CLAIM, "--json", *fever_args])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["answer"] == "supported"


def test_an_unknown_task_is_one_line(fever_args: list[str]) -> None:
    result = runner.invoke(app, ["ask", "--task", "squad", CLAIM, *fever_args])
    assert result.exit_code == 2
    assert "task must be hotpotqa or fever, got 'squad'" in flat(result.output)
    assert "Traceback" not in result.output


def test_ask_task_fever_gives_no_hint_that_flips_a_denied_label(
    tmp_path: Path, fever_args: list[str]
) -> None:
    script = [FEVER_RUN[0], "Thought 2: no.\nAction 2: Finish[not supported]", *FEVER_RUN[1:]]
    args = [*fever_args, "--model", write_script(tmp_path, script, "denied.json")]
    result = runner.invoke(app, ["ask", "--task", "fever", CLAIM, "--json", *args])
    assert result.exit_code == 0, result.output
    invalid = json.loads(result.stdout)["trajectory"][1]
    assert invalid["observation"].startswith("Invalid action: `not supported` is not a label.")
    assert "Did you mean" not in invalid["observation"]
    assert "Finish[NOT ENOUGH INFO]" in invalid["observation"]
