"""The audit trail and the protocol through the CLI, and across SIGKILL + resume."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from audit_worker import run as run_worker
from support import GOOD_RUN, QUESTION, TOOLS_RUN, flat, without_times, write_script
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.graph import build_graph
from wikireact.storage.sqlite.threads import SqliteThreads

pytestmark = pytest.mark.usefixtures("data_dir")
HERE = Path(__file__).resolve().parents[1]  # tests/, where the worker scripts are
runner = CliRunner()


def tool_script(tmp_path: Path, outputs: list[Any], name: str = "tools.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(outputs))
    return f"scripted:{path}"


def history(thread_id: str) -> dict[str, Any]:
    result = runner.invoke(app, ["history", thread_id, "--json"])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def test_ask_with_the_tools_protocol_and_history_json(tmp_path: Path, snapshot_db: Path) -> None:
    result = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--json",
            "--protocol",
            "tools",
            "--model",
            tool_script(tmp_path, TOOLS_RUN),
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "p1",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["answer"] == "yes" and [s["action"] for s in out["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]
    trail = history("p1")
    assert (
        trail["protocol"] == "tools"
        and trail["question"] == QUESTION
        and trail["status"] == "finished"
    )
    first = trail["steps"][0]
    assert first["action"] == {"verb": "Search", "arguments": {"title": "Scott Derrickson"}}
    assert first["observation"].startswith("Scott Derrickson (born July 16, 1966)")
    assert first["wiki_requests"] == 1 and first["input_tokens"] > 0 and first["approval"] is None
    assert first["started_at"] <= first["ended_at"]
    assert trail["steps"][3]["kind"] == "finish" and trail["steps"][3]["started_at"] is None


def test_resume_keeps_the_protocol(tmp_path: Path, snapshot_db: Path) -> None:
    first = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--json",
            "--protocol",
            "tools",
            "--model",
            tool_script(tmp_path, TOOLS_RUN[:2], "short.json"),
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "p2",
        ],
    )
    assert first.exit_code == 1 and "wikireact resume p2" in flat(first.stderr)
    resumed = runner.invoke(
        app, ["resume", "p2", "--json", "--model", tool_script(tmp_path, TOOLS_RUN)]
    )
    assert resumed.exit_code == 0, resumed.output
    out = json.loads(resumed.stdout)
    assert out["answer"] == "yes" and out["steps"] == 4  # tool calls still read as tool calls
    assert history("p2")["protocol"] == "tools"


def test_reviewer_is_recorded_from_the_terminal(tmp_path: Path, snapshot_db: Path) -> None:
    answers = "y\ne\nSearch[Ed Wood]\nn\nnot needed\n"
    outputs = [GOOD_RUN[0], "Thought: x\nAction: Search[Tim Burton]", GOOD_RUN[2], GOOD_RUN[3]]
    result = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--approve",
            "--reviewer",
            "alice",
            "--json",
            "--model",
            write_script(tmp_path, outputs),
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "r1",
        ],
        input=answers,
    )
    assert result.exit_code == 0, result.output
    approvals = [s["approval"] for s in history("r1")["steps"]]
    assert approvals == [
        {"decision": "approved", "by": "alice", "original_action": None, "note": None},
        {
            "decision": "edited",
            "by": "alice",
            "note": None,
            "original_action": {"verb": "Search", "arguments": {"title": "Tim Burton"}},
        },
        {"decision": "rejected", "by": "alice", "original_action": None, "note": "not needed"},
        None,
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--protocol", "xml"], "protocol must be text or tools, got 'xml'"),
        (
            ["--protocol", "tools", "--offline"],
            "the local model (Gemma 3 270M) has no tool calling",
        ),
    ],
)
def test_bad_protocol_settings_give_one_line(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["ask", QUESTION, *args])
    assert result.exit_code == 2 and message in flat(result.stderr)
    assert "Traceback" not in result.output and flat(result.stderr).count("error:") == 1


def steps_saved(db: Path, thread_id: str) -> int:
    if not db.exists():
        return 0
    store = SqliteThreads(db)
    try:
        return int(
            build_graph(store.saver)
            .get_state({"configurable": {"thread_id": thread_id}})
            .values.get("steps", 0)
        )
    finally:
        store.close()


def audit_saved(db: Path, thread_id: str) -> list[dict[str, Any]]:
    store = SqliteThreads(db)
    try:
        return list(
            build_graph(store.saver)
            .get_state({"configurable": {"thread_id": thread_id}})
            .values.get("audit", [])
        )
    finally:
        store.close()


@pytest.mark.slow
def test_audit_after_sigkill_and_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    reference = run_worker(str(tmp_path / "reference.db"), "a", 0.0)
    assert reference["answer"] == "yes" and len(reference["audit"]) == 8
    assert [a["approval"]["decision"] if a["approval"] else None for a in reference["audit"]] == [
        "approved",
        "edited",
        None,
        "rejected",
        "approved",
        "approved",
        "edited",
        None,
    ]
    db = tmp_path / "killed.db"
    command = [sys.executable, str(HERE / "audit_worker.py"), str(db), "a", "0.3"]
    kills = 0
    for target in (2, 5):  # kill twice, after step 2 and after step 5 were saved
        proc = subprocess.Popen(command, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 90
        while steps_saved(db, "a") < target and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        before = audit_saved(db, "a")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        after = audit_saved(db, "a")
        assert after[: len(before)] == before  # records already saved are never rewritten
    final = subprocess.run(command, cwd=HERE, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    resumed = json.loads(final.stdout)
    assert kills == 2 and resumed["answer"] == "yes"
    assert resumed["trajectory"] == reference["trajectory"]
    assert without_times(resumed["audit"]) == without_times(reference["audit"])
    assert resumed["audit"][: len(after)] == after  # survives resume unchanged, times included
    executed = [a for a in resumed["audit"] if a["kind"] == "executed"]
    assert executed and all(a["started_at"] and a["ended_at"] for a in executed)
