"""LATS across SIGKILL: killed mid-search, resumed in a new process, the same answer and tree."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lats_worker import SEARCH, SEARCHES, comparable
from lats_worker import run as run_worker

WORKER = Path(__file__).resolve().parent / "lats_worker.py"
SECOND_EXPANSION = 4
"""The index of the call that expands the second iteration's leaf."""


def lines(log: Path) -> list[str]:
    return log.read_text().split("\n")[:-1] if log.exists() else []


@pytest.mark.slow
def test_sigkill_mid_search_resumes_to_the_same_tree_without_repeating_actions(
    tmp_path: Path,
) -> None:
    logs = [str(tmp_path / name) for name in ("ref.calls", "ref.actions")]
    reference = run_worker(str(tmp_path / "reference.db"), 0.0, *logs)
    assert (reference["answer"], reference["stopped_by"]) == ("yes", "solved")
    assert len(lines(Path(logs[1]))) == SEARCHES

    db, calls, actions = tmp_path / "killed.db", tmp_path / "k.calls", tmp_path / "k.actions"
    command = [sys.executable, str(WORKER), str(db), "0.3", str(calls), str(actions)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 90
    # Kill while the second iteration's expansion asks the model: the first iteration (three
    # children, two Searches, a reflection, two values) is saved by then (durability "sync").
    while proc.poll() is None and time.time() < deadline:
        if str(SECOND_EXPANSION) in lines(calls):
            break
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = [int(i) for i in lines(calls)]
    fetched_before = lines(actions)

    final = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    after = [int(i) for i in lines(calls)][len(before) :]
    # Resumed at the expansion in flight: nothing before it again, nothing skipped.
    assert min(after) == SECOND_EXPANSION == max(before)
    assert sorted(set(before + after)) == list(range(len(SEARCH)))
    # Every Search ran once across both processes: the first iteration's were not re-run.
    assert len(fetched_before) == 2 and len(lines(actions)) == SEARCHES
    assert comparable(json.loads(final.stdout)) == comparable(reference)
