"""Headless Chromium for the tests of the self-contained pages (`eval report --html`, `history --html`).

Debian's `chromium` is used when installed; without it the tests skip, except under
CI=true (where .ci/run installs it), where they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-extensions",
]
"""Flags for a headless run that tries no network of its own."""


def chromium() -> str:
    """Return Debian's chromium, or skip (fail under CI=true, where .ci/run installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    reason = "headless Chromium is not installed (Debian: apt-get install -y chromium)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + "; CI must have it (.ci/run installs it)")
    pytest.skip(reason)


def run_chromium(url: str, profile: Path, *options: str) -> str:
    """Load `url` in headless Chromium with `options` (e.g. `--dump-dom`); return its stdout."""
    command = [chromium(), *FLAGS, f"--user-data-dir={profile}", *options, url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dump_dom(page: Path, fragment: str, profile: Path) -> str:
    """Return the DOM of `page` (opened at `#fragment`) after its script ran."""
    return run_chromium(page.as_uri() + fragment, profile, "--dump-dom")
