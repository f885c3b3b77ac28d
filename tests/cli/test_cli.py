"""The `wikireact` command: ask/resume/history/graph/snapshot and every user-facing error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import GOOD_RUN, PAGES, QUESTION, ask_args, flat, write_script
from typer.testing import CliRunner

from wikireact.cli.app import app

runner = CliRunner()


def test_snapshot_import_builds_a_snapshot_that_ask_reads(tmp_path: Path) -> None:
    pages = tmp_path / "pages.jsonl"
    pages.write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in PAGES.items()))
    out = tmp_path / "fixture.db"
    result = runner.invoke(app, ["snapshot", "import", str(pages), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 pages read, 2 added" in flat(result.output)
    asked = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--json",
            "--model",
            write_script(tmp_path, GOOD_RUN),
            "--wiki",
            str(out),
        ],
    )
    assert asked.exit_code == 0, asked.output
    assert json.loads(asked.stdout)["answer"] == "yes"


def test_ask_json_with_scripted_model_on_fixture_snapshot(
    tmp_path: Path, snapshot_db: Path
) -> None:
    result = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--json",
            "--model",
            write_script(tmp_path, GOOD_RUN),
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "t1",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["answer"] == "yes" and out["status"] == "finished" and out["steps"] == 4
    assert out["thread_id"] == "t1"
    assert out["trajectory"][1]["observation"].startswith("Edward Davis Wood Jr.")
    assert len(out["usage"]) == 4


def test_ask_live_view_shows_steps(tmp_path: Path, snapshot_db: Path) -> None:
    result = runner.invoke(
        app,
        ["ask", QUESTION, "--model", write_script(tmp_path, GOOD_RUN), "--wiki", str(snapshot_db)],
    )
    assert result.exit_code == 0, result.output
    assert "Thought 1:" in result.stdout and "Action 3: Lookup[born]" in flat(result.stdout)
    assert "Status: finished" in flat(result.stdout)


def test_missing_groq_key_explains_the_choices(snapshot_db: Path) -> None:
    result = runner.invoke(app, ["ask", QUESTION, "--wiki", str(snapshot_db)])
    assert result.exit_code == 2
    assert "GROQ_API_KEY" in result.stderr and "--offline" in flat(result.stderr)
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", ""], "the question is empty"),
        (["ask", "   "], "the question is empty"),
        (["ask", "x" * 2001], "the limit is 2000"),
        (["ask", "q", "--model", "nosuchprovider:model-x"], "nosuchprovider"),
        (["ask", "q", "--model", "justaname"], "not of the form provider:model"),
        (["ask", "q", "--model", "scripted:/nonexistent.json"], "cannot use script"),
        (["ask", "q", "--model", "local", "--wiki", "/nonexistent/snap.db"], "snapshot not found"),
        (["ask", "q", "--model", "local", "--wiki", "moon"], "unknown wiki source"),
        (["ask", "q", "--model", "local", "--max-steps", "0"], "max_steps must be at least 1"),
        (["resume", "no-such-thread"], "unknown thread id 'no-such-thread'"),
        (["history", "no-such-thread"], "unknown thread id 'no-such-thread'"),
    ],
)
def test_bad_input_gives_one_clear_line(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert message in flat(result.stderr)
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) <= 3  # one message (rich may wrap it)


def test_corrupt_snapshot_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database" * 50)
    result = runner.invoke(
        app, ["ask", "q", "--model", write_script(tmp_path, GOOD_RUN), "--wiki", str(junk)]
    )
    assert result.exit_code == 2 and "not a readable wikireact snapshot" in flat(result.stderr)


def test_resume_keeps_the_starting_settings(tmp_path: Path, snapshot_db: Path) -> None:
    loop = [f"Action: Lookup[w{i}]" for i in range(10)]
    first = runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, loop[:2], "loop2.json"),
            "--max-steps",
            "3",
            "--thread-id",
            "t3",
            "--json",
        ],
    )
    assert first.exit_code == 1
    resumed = runner.invoke(
        app, ["resume", "t3", "--json", "--model", write_script(tmp_path, loop, "loop.json")]
    )
    out = json.loads(resumed.stdout)
    assert out["status"] == "budget_exhausted" and out["steps"] == 3  # budget 3 kept from `ask`


def test_duplicate_thread_id_is_refused(tmp_path: Path, snapshot_db: Path) -> None:
    args = [
        *ask_args(snapshot_db, tmp_path, GOOD_RUN),
        "--thread-id",
        "dup",
    ]
    assert runner.invoke(app, args).exit_code == 0
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "already exists" in flat(again.stderr)


def test_graph_prints_mermaid() -> None:
    result = runner.invoke(app, ["graph"])
    assert result.exit_code == 0 and "parse -.-> act;" in result.stdout


def test_ctrl_c_leaves_a_checkpoint_that_resume_continues(
    tmp_path: Path, snapshot_db: Path, data_dir: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps({"outputs": GOOD_RUN, "delay_s": 1.0}))
    env = {**os.environ, "WIKIREACT_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wikireact",
            "ask",
            QUESTION,
            "--model",
            f"scripted:{slow}",
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "cc",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        if line.startswith("Action 2:"):
            break
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "wikireact resume cc" in flat(stderr) and "Traceback" not in stderr
    resumed = runner.invoke(
        app, ["resume", "cc", "--json", "--model", write_script(tmp_path, GOOD_RUN)]
    )
    out = json.loads(resumed.stdout)
    assert out["status"] == "finished" and out["steps"] == 4
    assert [s["action"] for s in out["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]


def test_corrupt_or_newer_checkpoint_files_are_refused(tmp_path: Path, snapshot_db: Path) -> None:
    import sqlite3

    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"garbage" * 100)
    newer = tmp_path / "newer.db"
    conn = sqlite3.connect(newer)
    conn.execute("CREATE TABLE wikireact_threads(thread_id TEXT PRIMARY KEY)")
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    for db, message in ((corrupt, "cannot use checkpoint file"), (newer, "newer wikireact")):
        before = db.read_bytes()
        result = runner.invoke(
            app,
            [
                *ask_args(snapshot_db, tmp_path, GOOD_RUN),
                "--db",
                str(db),
            ],
        )
        assert result.exit_code == 2 and message in flat(result.stderr)
        assert db.read_bytes() == before  # nothing written
        shown = runner.invoke(app, ["history", "t1", "--db", str(db)])  # which only reads
        assert shown.exit_code == 2 and message in flat(shown.stderr)


def test_wikipedia_outage_stops_with_a_resume_hint_not_an_answer(
    tmp_path: Path, snapshot_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wikireact.errors import WikiUnavailableError
    from wikireact.wiki.factory import close_sources
    from wikireact.wiki.live import Transport

    def down(self: Transport, params: dict) -> dict:
        raise WikiUnavailableError("Wikipedia is unavailable right now (connection refused).")

    monkeypatch.setattr(Transport, "get_json", down)
    close_sources()
    mona = [
        "Thought: look it up.\nAction: Search[Mona Lisa]",
        "Thought: again.\nAction: Search[Mona Lisa]",
        "Action: Finish[Mona Lisa]",
    ]
    first = runner.invoke(
        app,
        [
            "ask",
            "Who painted the Mona Lisa?",
            "--model",
            write_script(tmp_path, mona),
            "--wiki",
            "live",
            "--thread-id",
            "out",
        ],
    )
    close_sources()
    assert first.exit_code == 1, first.output
    message = flat(first.stderr)
    assert "Wikipedia is unavailable right now" in message and "wikireact resume out" in message
    assert "--wiki offline" in message and "Status: finished" not in first.output
