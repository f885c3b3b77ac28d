"""Run wikireact in a fresh interpreter as if no optional extra were installed.

The extras' modules (`wikireact._extras.EXTRAS`, plus psycopg's binary part) are made
unimportable by a finder placed first on `sys.meta_path`; the run can also report which
top-level packages it imported. The wheel smoke test (`.ci/wheel_smoke.sh`) checks the
same with a package really installed without extras.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from wikireact._extras import EXTRAS

ALSO_HIDDEN = {"psycopg_binary", "numpy", "diskcache", "jinja2"}
"""What only the extras bring along (llama-cpp-python's and matplotlib's dependencies)."""
HIDDEN = tuple(sorted({m for modules in EXTRAS.values() for m in modules} | ALSO_HIDDEN))

SETTINGS = ("GROQ_API_KEY", "WIKIREACT_MODEL", "WIKIREACT_WIKI", "WIKIREACT_MAX_STEPS")
"""Environment variables a run must not inherit (it uses its own data dir, no key)."""

PRELUDE = """
import atexit, importlib.abc, importlib.util, json, os, sys
HIDDEN = {hidden!r}

def hidden(name):
    return any(name == h or name.startswith(h + ".") for h in HIDDEN)

class HideExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if hidden(name):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, HideExtras())
real_find_spec = importlib.util.find_spec
importlib.util.find_spec = lambda name, package=None: (
    None if hidden(name) else real_find_spec(name, package)
)
report = os.environ.get("WIKIREACT_TEST_MODULES")
if report:
    atexit.register(lambda: open(report, "w").write(json.dumps(sorted(sys.modules))))
"""


@dataclass(frozen=True)
class Run:
    """What a run printed, its exit code and the top-level packages it imported."""

    code: int
    stdout: str
    stderr: str
    packages: frozenset[str]


def run_python(code: str, tmp_path: Path, *, hide: bool = True, timeout: float = 120) -> Run:
    """Run `code` after the prelude (extras hidden unless `hide` is False)."""
    modules = tmp_path / "modules.json"
    prelude = PRELUDE.format(hidden=HIDDEN if hide else ())
    env = {
        **{k: v for k, v in os.environ.items() if k not in SETTINGS},
        "WIKIREACT_DATA_DIR": str(tmp_path / "data"),
        "WIKIREACT_TEST_MODULES": str(modules),
        "COLUMNS": "200",
    }
    done = subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=tmp_path,
    )
    loaded = json.loads(modules.read_text()) if modules.exists() else []
    return Run(
        done.returncode, done.stdout, done.stderr, frozenset(m.split(".")[0] for m in loaded)
    )


def run_cli(*args: str, tmp_path: Path, hide: bool = True, timeout: float = 120) -> Run:
    """Run `wikireact ARGS...` (the console script's entry point) with the extras hidden."""
    code = (
        f"sys.argv = ['wikireact', *{list(args)!r}]\nfrom wikireact.cli.app import main\nmain()\n"
    )
    return run_python(code, tmp_path, hide=hide, timeout=timeout)
