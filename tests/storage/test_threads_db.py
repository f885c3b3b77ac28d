"""Threads on SQLite and PostgreSQL through the CLI: ask, resume, history, run locks.

(Approval on both stores: tests/cli/test_cli_approval.py.)

Every test runs against both stores (`db_target`). The run-lock tests use real processes:
an `ask` is SIGKILLed, then two `resume`s start at once; exactly one runs the thread and
nothing is executed twice (the checkpoint chain equals an uninterrupted run's).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from support import GOOD_RUN, PAGES, QUESTION, ask_args, flat, thread, write_script
from typer.testing import CliRunner

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.cli.app import app
from wikireact.errors import ThreadsError
from wikireact.storage.sqlite.codec import CompressingSerializer
from wikireact.storage.sqlite.saver import CompactSqliteSaver
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.storage.threads import open_threads

runner = CliRunner()
ACTIONS = ["Search[Scott Derrickson]", "Search[Ed Wood]", "Lookup[born]", "Finish[yes]"]


def chain(db: str, thread_id: str) -> list[tuple[int, str]]:
    """The thread's checkpoints, oldest first, as (superstep, parent id); asserts one linear chain."""
    store = open_threads(db)
    try:
        history = list(build_graph(store.saver).get_state_history(thread(thread_id)))
    finally:
        store.close()
    ids = [s.config["configurable"]["checkpoint_id"] for s in history]
    parents = [
        s.parent_config["configurable"]["checkpoint_id"] if s.parent_config else None
        for s in history
    ]
    assert parents[:-1] == ids[1:], "the checkpoints fork: something ran twice"
    return [
        (s.metadata["step"] if s.metadata else -9, str(p))
        for s, p in zip(history, parents, strict=True)
    ][::-1]


def test_ask_resume_history_on_both_stores(
    tmp_path: Path, snapshot_db: Path, db_target: str
) -> None:
    first = runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN[:2], "short.json"),
            "--thread-id",
            "t2",
            "--json",
            "--db",
            db_target,
        ],
    )
    assert first.exit_code == 1 and "wikireact resume t2" in flat(first.stderr)
    assert "did not answer step 3" in flat(first.stderr)  # the script "stays down" at step 3
    resumed = runner.invoke(
        app,
        ["resume", "t2", "--json", "--db", db_target, "--model", write_script(tmp_path, GOOD_RUN)],
    )
    assert resumed.exit_code == 0, resumed.output
    out = json.loads(resumed.stdout)
    assert out["answer"] == "yes" and [s["action"] for s in out["trajectory"]] == ACTIONS
    listed = runner.invoke(app, ["history", "t2", "--db", db_target])
    assert listed.exit_code == 0 and listed.stdout.count("superstep") >= 16
    assert "Action 4: Finish[yes]" in flat(listed.stdout)
    unknown = runner.invoke(app, ["resume", "nope", "--db", db_target])
    assert unknown.exit_code == 2 and "unknown thread id 'nope'" in flat(unknown.stderr)


def test_a_running_thread_is_not_resumed_twice(
    tmp_path: Path, snapshot_db: Path, db_target: str
) -> None:
    first = runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN[:2], "short.json"),
            "--thread-id",
            "busy",
            "--db",
            db_target,
        ],
    )
    assert first.exit_code == 1
    holder = open_threads(db_target)  # stands for another process running the thread
    try:
        assert holder.try_claim("busy")
        refused = runner.invoke(
            app, ["resume", "busy", "--db", db_target, "--model", write_script(tmp_path, GOOD_RUN)]
        )
        assert refused.exit_code == 2
        assert "thread 'busy' is being run by another process" in flat(refused.stderr)
        assert "Traceback" not in refused.output and len(refused.stderr.strip().splitlines()) <= 3
        holder.release("busy")
        resumed = runner.invoke(
            app,
            [
                "resume",
                "busy",
                "--db",
                db_target,
                "--json",
                "--model",
                write_script(tmp_path, GOOD_RUN),
            ],
        )
        assert resumed.exit_code == 0, resumed.output
    finally:
        holder.close()


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "wikireact", *args]


@pytest.mark.slow
def test_sigkill_then_two_concurrent_resumes_run_the_thread_once(
    tmp_path: Path, snapshot_db: Path, db_target: str, data_dir: Path
) -> None:
    env = {**os.environ, "WIKIREACT_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    slow = write_script(tmp_path, GOOD_RUN, "slow.json", delay_s=0.7)
    ask = subprocess.Popen(
        _cli(
            "ask",
            QUESTION,
            "--model",
            slow,
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "k",
            "--db",
            db_target,
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert ask.stdout is not None
    deadline = time.time() + 60
    while time.time() < deadline and not ask.stdout.readline().startswith("Action 1:"):
        pass
    ask.send_signal(signal.SIGKILL)
    ask.wait()
    resumes = [
        subprocess.Popen(
            _cli("resume", "k", "--json", "--db", db_target),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in resumes]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2], results
    out = json.loads(next(stdout for code, stdout, _ in results if code == 0))
    assert [s["action"] for s in out["trajectory"]] == ACTIONS and out["answer"] == "yes"
    refused = next(stderr for code, _, stderr in results if code == 2)
    assert "thread 'k' is being run by another process" in flat(refused)
    # an uninterrupted run in a fresh store has the same checkpoints: nothing ran twice
    reference_db = db_target + "-ref" if not db_target.startswith("postgresql") else db_target
    done = subprocess.run(
        _cli(
            *ask_args(snapshot_db, tmp_path, GOOD_RUN),
            "--thread-id",
            "ref",
            "--db",
            reference_db,
            "--json",
        ),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert [step for step, _ in chain(db_target, "k")] == [
        step for step, _ in chain(reference_db, "ref")
    ]


def test_stock_sqlite_thread_continues_with_wikireacts_saver(tmp_path: Path) -> None:
    """Stock string versions are kept for such a thread (ints and strings cannot be compared)."""
    db = tmp_path / "stock.db"
    stock = build_graph(
        SqliteSaver(sqlite3.connect(db, check_same_thread=False)),
        model=ScriptedChatModel(outputs=GOOD_RUN),
        wiki=MemorySource(PAGES),
        interrupt_before=["act"],
    )
    stock.invoke({"question": QUESTION}, thread())
    assert stock.get_state(thread()).next == ("act",)
    with pytest.raises(ThreadsError, match="another program's SQLite database"):
        SqliteThreads(db)  # the CLI's store refuses a file it did not create, in one line
    saver = CompactSqliteSaver(
        sqlite3.connect(db, check_same_thread=False), serde=CompressingSerializer()
    )
    ours = build_graph(saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=MemorySource(PAGES))
    out = ours.invoke(None, thread())
    assert [s["action"] for s in out["trajectory"]] == ACTIONS and out["answer"] == "yes"


def test_unreachable_postgresql_is_one_line_without_the_password() -> None:
    result = runner.invoke(app, ["history", "t", "--db", "postgresql://u:s3cret@127.0.0.1:1/none"])
    assert result.exit_code == 2
    assert "cannot connect to postgresql://127.0.0.1:1/none" in flat(result.stderr)
    assert "s3cret" not in result.output and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) <= 3
