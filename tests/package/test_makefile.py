"""`make setup` (run by the first `make demo`/`make test`) says what it is about to do and how
long it takes, then shows it is alive while pip builds llama.cpp in silence.

Checked through `make -n` (a dry run: nothing is installed) and the Makefile's own heartbeat
wrapper around short commands.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = ROOT / "Makefile"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make(tmp_path: Path, *args: str, rules: str = "") -> subprocess.CompletedProcess[str]:
    """Run `make` on the project's Makefile plus `rules`, from the checkout."""
    probe = tmp_path / "probe.mk"
    probe.write_text(f"include {MAKEFILE}\n{rules}")
    return subprocess.run(
        ["make", "--no-print-directory", "-f", str(probe), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_setup_announces_the_install_and_its_duration_before_pip_runs(tmp_path: Path) -> None:
    dry = make(tmp_path, "-n", "setup", f"VENV={tmp_path / 'venv'}")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    install = next(i for i, line in enumerate(lines) if "still installing" in line)
    said = " ".join(lines[:install])
    assert "minutes" in said and "package index" in said and "llama.cpp" in said
    assert "a line a minute" in said
    assert "pip install --quiet -e" in lines[install], "the long install runs under the heartbeat"
    assert "sleep 60" in lines[install]


def test_the_heartbeat_prints_while_a_command_runs_and_keeps_its_status(tmp_path: Path) -> None:
    rules = "slow: ; @$(call alive,sleep 3; echo done)\nfails: ; @$(call alive,exit 3)\n"
    slow = make(tmp_path, "slow", "HEARTBEAT_S=1", rules=rules)
    assert slow.returncode == 0, slow.stderr
    assert "still installing (0 min 1 s)" in slow.stdout and slow.stdout.endswith("done\n")
    fails = make(tmp_path, "fails", "HEARTBEAT_S=1", rules=rules)
    assert fails.returncode != 0 and "Error 3" in fails.stderr
