"""`wikireact studio` as a service manager runs it: stopped by a signal to its pid, state where it says.

`wikireact studio` runs `langgraph dev` as its child. A SIGTERM or SIGINT sent to its pid
(not to its process group) stops the child too; the server keeps its state in
`DIR/.langgraph_api` (`--state-dir`, default the current directory), which `--fresh` clears
before it starts, so runs interrupted earlier are not re-run first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_served import free_port, wait_until_up

pytestmark = [pytest.mark.served, pytest.mark.slow]


def start_studio(work: Path, *options: str) -> tuple[subprocess.Popen[bytes], Path]:
    """Start `wikireact studio` in `work` (offline, a free port); return it once it answers, and its log."""
    port = free_port()
    env = {
        **os.environ,
        "WIKIREACT_DATA_DIR": str(work / "data"),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
    }
    env.pop("GROQ_API_KEY", None)
    log = work / "studio.log"
    argv = [sys.executable, "-m", "wikireact", "studio", "--port", str(port), *options]
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until_up(f"http://127.0.0.1:{port}", log, seconds=90)
    except BaseException:
        stop(proc)
        raise
    return proc, log


def children(pid: int) -> list[int]:
    """Return the pids of `pid`'s child processes (Linux)."""
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(line) for line in found.stdout.split()]


def gone(pid: int, seconds: float = 30) -> bool:
    """Whether process `pid` has ended (or is a zombie no one waits for) within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z" or time.monotonic() >= deadline:
            return state == "Z"
        time.sleep(0.2)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End `proc` and its children whatever happened (cleanup after a failure)."""
    for child in children(proc.pid):
        os.kill(child, signal.SIGKILL)
    proc.kill()
    proc.wait(timeout=15)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_studios_pid_stops_its_server(tmp_path: Path, signum: int) -> None:
    proc, log = start_studio(tmp_path)
    server = children(proc.pid)
    try:
        assert server, "wikireact studio runs langgraph dev as its child"
        os.kill(proc.pid, signum)
        assert proc.wait(timeout=60) == 0, log.read_text()
        assert all(gone(pid) for pid in server), "langgraph dev outlived wikireact studio"
    finally:
        for pid in server:  # an orphaned server must not outlive the test
            if not gone(pid, 0):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            stop(proc)
    assert (tmp_path / ".langgraph_api").is_dir()  # where it said it keeps its state
    said = " ".join(log.read_text().split())
    assert str(tmp_path / ".langgraph_api") in said and "--fresh" in said
    assert "1 run at a time" in said


def test_state_dir_and_fresh(tmp_path: Path) -> None:
    state = tmp_path / "state"
    old = state / ".langgraph_api"
    old.mkdir(parents=True)
    (old / ".langgraph_ops.pckl").write_bytes(b"runs interrupted earlier")
    proc, log = start_studio(
        tmp_path, "--state-dir", str(state), "--fresh", "--n-jobs-per-worker", "3"
    )
    try:
        assert not (old / ".langgraph_ops.pckl").exists()  # cleared before the server started
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            stop(proc)
    assert old.is_dir() and not (tmp_path / ".langgraph_api").exists()
    assert "3 runs at a time" in " ".join(log.read_text().split())
