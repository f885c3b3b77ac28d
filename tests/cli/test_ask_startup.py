"""`ask` starts with what its episode uses, and leaves Python's garbage collector on.

What a scripted `ask` on SQLite loads is read in a fresh `wikireact` process (no timing:
bench/startup.py times it). The collector `ask` pauses while it starts (`pause_gc`) must be
on while the episode runs and after every command, however it ends.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import GOOD_RUN, ask_args
from typer.testing import CliRunner

from wikireact.cli import episode
from wikireact.cli.app import app

pytestmark = pytest.mark.usefixtures("data_dir", "wide_terminal")
NOT_USED = (
    "langchain_groq",
    "psycopg",
    "llama_cpp",
    "platformdirs",
    "wikireact.storage.postgres.threads",
    "wikireact.models.cache",
    "wikireact.models.local.llama",
)
"""Modules a scripted `ask` on a SQLite `--db`, given WIKIREACT_DATA_DIR, has no use for."""
REPORT = """
import atexit, gc, json, sys
report = sys.argv.pop(1)
def write():
    with open(report, "w") as out:
        json.dump({"modules": sorted(sys.modules), "gc": gc.isenabled()}, out)
atexit.register(write)
from wikireact.cli.app import main
sys.argv[0] = "wikireact"
main()
"""


def test_a_scripted_ask_loads_no_other_model_or_store(tmp_path: Path, snapshot_db: Path) -> None:
    report = tmp_path / "report.json"
    args = [*ask_args(snapshot_db, tmp_path, GOOD_RUN), "--db", str(tmp_path / "t.db")]

    done = subprocess.run(
        [sys.executable, "-c", REPORT, str(report), *args],
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr
    seen = json.loads(report.read_text())
    assert "Answer: yes" in done.stdout
    assert [m for m in NOT_USED if m in seen["modules"]] == []
    assert seen["gc"] is True


def test_the_collector_is_on_during_the_episode_and_after_ask(
    tmp_path: Path, snapshot_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    during: list[bool] = []
    drive = episode._drive

    def watched(*args: Any, **kwargs: Any) -> Any:
        during.append(gc.isenabled())
        return drive(*args, **kwargs)

    monkeypatch.setattr(episode, "_drive", watched)
    result = CliRunner().invoke(app, ask_args(snapshot_db, tmp_path, GOOD_RUN))

    assert result.exit_code == 0, result.output
    assert during == [True] and gc.isenabled()


@pytest.mark.parametrize(
    "args",
    [["ask", " "], ["ask", "Who?", "--agent", "nobody"], ["resume", "nothing", "--db", "x.db"]],
)
def test_the_collector_is_on_after_a_refused_command(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)

    assert result.exit_code == 2, result.output
    assert gc.isenabled()
