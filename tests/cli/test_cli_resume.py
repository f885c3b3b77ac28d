"""Resume hints that work as printed, recaps, larger budgets, history as a transcript (issue 20 item 4)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import GOOD_RUN, QUESTION, ask_args, flat, write_script
from typer.testing import CliRunner

from wikireact.cli.app import app

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("data_dir")


def hint_in(stderr: str) -> list[str]:
    """The resume command an error message tells the user to run, as argv."""
    match = re.search(r"`(wikireact resume [^`]+)`", flat(stderr))
    assert match, stderr
    return shlex.split(match.group(1))[1:]


def test_model_down_hint_names_the_db_and_works_as_printed(
    tmp_path: Path, snapshot_db: Path, data_dir: Path
) -> None:
    db = tmp_path / "my threads.db"
    first = runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN[:2], "short.json"),
            "--db",
            str(db),
            "--thread-id",
            "t1",
        ],
    )
    assert first.exit_code == 1
    argv = hint_in(first.stderr)
    assert argv[:2] == ["resume", "t1"] and argv[argv.index("--db") + 1] == str(db.resolve())
    resumed = runner.invoke(app, [*argv, "--json", "--model", write_script(tmp_path, GOOD_RUN)])
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["answer"] == "yes"
    assert not (data_dir / "threads.db").exists()  # the default file was never created


def test_resume_does_not_create_an_empty_default_file(data_dir: Path) -> None:
    result = runner.invoke(app, ["resume", "t1"])
    assert result.exit_code == 2 and "there is no checkpoint file" in flat(result.stderr)
    assert not (data_dir / "threads.db").exists()


def test_ctrl_c_hint_names_the_db(tmp_path: Path, snapshot_db: Path, data_dir: Path) -> None:
    slow = write_script(tmp_path, GOOD_RUN, "slow.json", delay_s=1.0)
    db = tmp_path / "elsewhere.db"
    env = {**os.environ, "WIKIREACT_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wikireact",
            "ask",
            QUESTION,
            "--model",
            slow,
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "cc",
            "--db",
            str(db),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    deadline = time.time() + 60
    while time.time() < deadline and not proc.stdout.readline().startswith("Action 1:"):
        pass
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert hint_in(stderr) == ["resume", "cc", "--db", str(db.resolve())]


def test_resume_recaps_the_question_and_steps(tmp_path: Path, snapshot_db: Path) -> None:
    runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN[:2], "short.json"),
            "--thread-id",
            "r1",
        ],
    )
    resumed = runner.invoke(app, ["resume", "r1", "--model", write_script(tmp_path, GOOD_RUN)])
    assert resumed.exit_code == 0, resumed.output
    out = resumed.stdout
    order = [
        out.index(f"Question: {QUESTION}"),
        out.index("Action 1: Search[Scott Derrickson]"),
        out.index("Action 2: Search[Ed Wood]"),
        out.index("Action 3: Lookup[born]"),
        out.index("Answer: yes"),
    ]
    assert order == sorted(order)


def budget_run(tmp_path: Path, snapshot_db: Path) -> None:
    result = runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN),
            "--thread-id",
            "b1",
            "--max-steps",
            "2",
        ],
    )
    assert "no answer (budget of 2 steps used)" in result.stdout


def test_resume_with_a_larger_budget_continues(tmp_path: Path, snapshot_db: Path) -> None:
    budget_run(tmp_path, snapshot_db)
    resumed = runner.invoke(app, ["resume", "b1", "--max-steps", "7", "--json"])
    assert resumed.exit_code == 0, resumed.output
    out = json.loads(resumed.stdout)
    assert out["status"] == "finished" and out["answer"] == "yes" and out["steps"] == 4
    assert [s["action"] for s in out["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]


def test_resume_with_a_budget_too_small_says_why_not(tmp_path: Path, snapshot_db: Path) -> None:
    budget_run(tmp_path, snapshot_db)
    resumed = runner.invoke(app, ["resume", "b1", "--max-steps", "2"])
    assert resumed.exit_code == 2
    assert "has used 2 steps: --max-steps must be more than 2" in flat(resumed.stderr)


def test_resume_of_a_finished_thread_with_more_budget_says_why_not(
    tmp_path: Path, snapshot_db: Path
) -> None:
    runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN),
            "--thread-id",
            "f1",
        ],
    )
    resumed = runner.invoke(app, ["resume", "f1", "--max-steps", "9"])
    assert resumed.exit_code == 2 and "has ended (finished)" in flat(resumed.stderr)


def test_history_is_a_transcript_then_checkpoints_that_resume_accepts(
    tmp_path: Path, snapshot_db: Path
) -> None:
    runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN),
            "--thread-id",
            "h1",
        ],
    )
    result = runner.invoke(app, ["history", "h1"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:4] == [f"Question: {QUESTION}", "Status: finished", "Answer: yes", "Steps: 4"]
    out = result.stdout
    header = out.index("Checkpoints")
    assert out.index("Action 4: Finish[yes]") < header
    assert "wikireact resume h1 --from CHECKPOINT" in out[header:]
    checkpoints = re.findall(
        r"^(\S+)  superstep .*steps  1  next reason", out[header:], re.MULTILINE
    )
    assert checkpoints, out
    # fork from the checkpoint after step 1, with another model: a new branch that ends differently
    fork = runner.invoke(
        app,
        [
            "resume",
            "h1",
            "--from",
            checkpoints[0],
            "--json",
            "--model",
            write_script(tmp_path, [GOOD_RUN[0], "Thought: sure\nAction: Finish[no]"], "fork.json"),
        ],
    )
    assert fork.exit_code == 0, fork.output
    out_fork = json.loads(fork.stdout)
    assert out_fork["answer"] == "no" and out_fork["steps"] == 2
    assert runner.invoke(app, ["resume", "h1", "--from", "nope"]).exit_code == 2


def test_hint_for_an_odd_thread_id_works_as_printed(tmp_path: Path, snapshot_db: Path) -> None:
    odd = "-odd id's"
    first = runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN[:2], "short.json"),
            f"--thread-id={odd}",
            "--db",
            str(tmp_path / "t.db"),
        ],
    )
    assert first.exit_code == 1
    argv = hint_in(first.stderr)
    assert argv[-2:] == ["--", odd]
    resumed = runner.invoke(
        app, [*argv[:-2], "--json", "--model", write_script(tmp_path, GOOD_RUN), *argv[-2:]]
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["thread_id"] == odd
