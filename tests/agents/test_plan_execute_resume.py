"""Plan-and-Execute across SIGKILL: killed inside a sub-goal, resumed in a new process inside it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pe_scripts import FIRST_CALL_OF_SUBGOAL_2, WHOLE_RUN, WHOLE_RUN_ACTIONS
from plan_execute_worker import progress
from plan_execute_worker import run as run_worker
from support import without_times

WORKER = Path(__file__).resolve().parent / "plan_execute_worker.py"


def calls(log: Path) -> list[int]:
    return [int(line) for line in log.read_text().split()] if log.exists() else []


@pytest.mark.slow
def test_sigkill_inside_a_subgoal_resumes_inside_it_and_ends_identically(tmp_path: Path) -> None:
    reference = run_worker(str(tmp_path / "reference.db"), "r", 0.0, str(tmp_path / "ref.log"))
    assert reference["answer"] == "yes" and reference["status"] == "finished"
    assert [s["action"] for s in reference["trajectory"]] == WHOLE_RUN_ACTIONS
    assert calls(tmp_path / "ref.log") == list(range(len(WHOLE_RUN)))

    db, log = tmp_path / "killed.db", tmp_path / "killed.log"
    command = [sys.executable, str(WORKER), str(db), "k", "0.3", str(log)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 90
    # Kill while sub-goal 2's second step asks the model (its first step is saved by then:
    # durability "sync"). The call log tells, so the database is not read while it is written.
    while proc.poll() is None and time.time() < deadline:
        if FIRST_CALL_OF_SUBGOAL_2 + 1 in calls(log):
            break
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done, steps_in_subgoal = progress(str(db), "k")
    assert done == 1 and 1 <= steps_in_subgoal < 4  # killed inside sub-goal 2
    before_kill = calls(log)

    final = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    resumed = json.loads(final.stdout)
    after_resume = calls(log)[len(before_kill) :]
    # Resumed inside sub-goal 2: no plan, no sub-goal 1, not even sub-goal 2's saved steps
    # again (the call in flight at the kill may be made again, unless its writes were saved).
    assert min(after_resume) >= FIRST_CALL_OF_SUBGOAL_2 + steps_in_subgoal
    assert min(after_resume) <= max(before_kill) + 1  # and nothing skipped
    assert sorted(set(before_kill + after_resume)) == list(range(len(WHOLE_RUN)))
    for key in ("answer", "status", "steps", "model_calls", "trajectory", "usage", "subgoals"):
        assert resumed[key] == reference[key], key
    assert resumed["plans"] == reference["plans"]
    assert without_times(resumed["audit"]) == without_times(reference["audit"])
