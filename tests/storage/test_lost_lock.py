"""A lost PostgreSQL lock connection never lets two processes run one thread (issue 25, item 3).

Run locks and checkpoint saves share one session, so once the server ends it (an
administrator, a restart, a network failure) the process can save nothing more: its
episodes stop at their next save with one line, and another process continues them from
their last checkpoint. Idle timeouts on the server do not end wikireact's sessions.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from lost_lock_scenario import QUESTIONS, run_scenario
from support import EVAL_SCRIPT, GOOD_RUN, QUESTION, eval_config, flat, write_script
from typer.testing import CliRunner

from wikireact import ScriptedChatModel
from wikireact.cli.app import app
from wikireact.eval.run import run_eval
from wikireact.storage.postgres.cluster import PgCluster
from wikireact.wiki.snapshot import SnapshotSource

runner = CliRunner()


def test_server_idle_timeouts_do_not_end_a_run(
    tmp_path: Path, pg_url: str, files: tuple[Path, Path], data_dir: Path
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            f"ALTER DATABASE \"{pg_url.rsplit('/', 1)[1]}\" SET idle_session_timeout = '1s'"
        )
    dataset, snapshot = files
    report = run_eval(  # the lock session idles through every 1.3 s model call
        eval_config(dataset, snapshot, limit=2, concurrency=2),
        tmp_path / "w",
        db=pg_url,
        run="idle",
        model=ScriptedChatModel(outputs=EVAL_SCRIPT[3:], delay_s=1.3),
        wiki=SnapshotSource.open(snapshot),
    )
    assert sum(report["metrics"]["categories"].values()) == 2
    slow = write_script(tmp_path, GOOD_RUN[2:], "slow.json", delay_s=1.3)
    asked = runner.invoke(
        app,
        ["ask", QUESTION, "--model", slow, "--wiki", str(snapshot), "--db", pg_url, "--json"],
    )
    assert asked.exit_code == 0, asked.output


def _advisory_lock_holders(url: str) -> list[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
        ).fetchall()
    return [int(pid) for (pid,) in rows]


@pytest.mark.slow
def test_ask_stops_at_its_next_save_when_its_lock_connection_ends(
    tmp_path: Path, snapshot_db: Path, pg_url: str, data_dir: Path
) -> None:
    env = {**os.environ, "WIKIREACT_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    slow = write_script(tmp_path, GOOD_RUN, "slow.json", delay_s=0.7)
    ask = subprocess.Popen(
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
            "k",
            "--db",
            pg_url,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert ask.stdout is not None
    deadline = time.time() + 60
    while time.time() < deadline and not ask.stdout.readline().startswith("Action 1:"):
        pass
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for pid in _advisory_lock_holders(pg_url):
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    _, stderr = ask.communicate(timeout=60)
    assert ask.returncode == 1, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) <= 3 and "Traceback" not in stderr, stderr
    message = flat(stderr)
    assert "lost the connection to" in message and "stopped before its next save" in message
    assert "`wikireact resume k --db" in message
    resumed = runner.invoke(
        app, ["resume", "k", "--db", pg_url, "--json", "--model", write_script(tmp_path, GOOD_RUN)]
    )
    assert resumed.exit_code == 0, resumed.output
    assert '"answer": "yes"' in resumed.stdout


@pytest.mark.slow
def test_a_worker_that_loses_its_locks_stops_and_nothing_runs_twice(
    tmp_path: Path, pg_cluster: PgCluster
) -> None:
    outcome = run_scenario(pg_cluster, tmp_path)
    assert outcome.forks == []
    assert outcome.steps_per_thread == outcome.reference_steps  # no step ran twice
    assert sorted(outcome.recorded) == sorted((f"q{i}", 0) for i in range(QUESTIONS))
    assert "stopped its" in outcome.fenced_line, outcome.other_failures
    # A model call in flight when the session ended is the only one paid again: its reply
    # could not be saved (at most one per episode A was running); `problems` checks that.
    assert outcome.problems() == []
