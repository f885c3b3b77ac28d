"""`ask --agent reflexion`: trials, lessons kept in `--db` for later runs, its own options."""

from __future__ import annotations

import json
from pathlib import Path

from support import QUESTION, flat, write_script
from typer.testing import CliRunner, Result

from wikireact.cli.app import app

runner = CliRunner()
WANDER = "Thought 1: Let me look.\nAction 1: Search[Scott Derrickson]"
LESSON = "Search both people first, then answer."
FINISH = "Thought 1: Both are American.\nAction 1: Finish[yes]"


def ask(tmp_path: Path, snapshot_db: Path, thread: str, outputs: list[str], *extra: str) -> Result:
    return runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--agent",
            "reflexion",
            "--model",
            write_script(tmp_path, outputs, name=f"{thread}.json"),
            "--wiki",
            str(snapshot_db),
            "--db",
            str(tmp_path / "threads.db"),
            "--thread-id",
            thread,
            "--json",
            *extra,
        ],
    )


def test_a_lesson_written_by_one_ask_is_shown_to_the_next(
    tmp_path: Path, snapshot_db: Path
) -> None:
    # The first trial runs out of its one step (no Finish: failed without a gold answer).
    first = ask(tmp_path, snapshot_db, "r1", [WANDER, LESSON, FINISH], "--max-steps", "1")
    assert first.exit_code == 0, first.output
    out = json.loads(first.stdout)
    assert out["answer"] == "yes" and out["model_calls"] == 3
    assert [t["reflection"] for t in out["trials"]] == [LESSON, None]
    assert out["trials"][1]["lessons"] == [LESSON]
    # A later run on the same question, another thread, the same --db: the lesson is recalled.
    later = ask(tmp_path, snapshot_db, "r2", [FINISH])
    assert later.exit_code == 0, later.output
    assert json.loads(later.stdout)["trials"][0]["lessons"] == [LESSON]
    alone = ask(tmp_path, snapshot_db, "r3", [FINISH], "--memory", "off")
    assert json.loads(alone.stdout)["trials"][0]["lessons"] == []


def test_max_trials_bounds_the_attempts(tmp_path: Path, snapshot_db: Path) -> None:
    args = ["--max-steps", "1", "--max-trials", "1", "--memory", "off"]  # no lesson to keep
    result = ask(tmp_path, snapshot_db, "m", [WANDER], *args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert len(out["trials"]) == 1 and out["status"] == "budget_exhausted"


def test_reflexion_options_are_refused_for_another_agent(tmp_path: Path, snapshot_db: Path) -> None:
    result = runner.invoke(
        app,
        ["ask", QUESTION, "--model", write_script(tmp_path, [FINISH]), "--max-trials", "2"],
    )
    assert result.exit_code == 2
    assert flat(result.output) == (
        "error: --max-trials belong to --agent reflexion (this question runs with --agent react)"
    )
