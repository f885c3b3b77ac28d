"""Startup: `wikireact --help`, `--version` and each command's `-h` against `import typer, rich`.

Each command runs `RUNS` times as a fresh process (the installed console script, next to
this Python); a figure is the least CPU time (user + system) of its runs, which a busy
machine disturbs far less than wall time (also shown, least of the runs). Targets (issue
26): at most 0.3 s, and at most 6x `python -c "import typer, rich"` measured in the same
run. Also checked: which heavy packages `import wikireact.errors`, `wikireact.context` and
`--help` load (none of LangGraph, LangChain).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from table import Row

RUNS = 7
TARGET_S = 0.3
TARGET_RATIO = 6.0
WIKIREACT = str(Path(sys.executable).with_name("wikireact"))
BASELINE = [sys.executable, "-c", "import typer, rich"]
COMMANDS = [
    ["--help"],
    ["--version"],
    ["ask", "-h"],
    ["resume", "-h"],
    ["history", "-h"],
    ["graph", "-h"],
    ["eval", "-h"],
    ["eval", "report", "-h"],
    ["snapshot", "import", "-h"],
    ["studio", "-h"],
]
HEAVY = ("langgraph", "langchain_core", "langchain", "psycopg", "llama_cpp", "numpy")


def timed(argv: list[str]) -> tuple[float, float]:
    """Return the least (CPU seconds, wall seconds) of `RUNS` runs of `argv`."""
    cpu, wall = [], []
    for _ in range(RUNS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(cpu), min(wall)


def heavy_after(statement: str) -> list[str]:
    """Return the heavy packages a fresh interpreter holds after `statement`."""
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {m.split(".")[0] for m in json.loads(out.stdout.splitlines()[-1])}
    return sorted(loaded & set(HEAVY))


def rows() -> list[Row]:
    """Time the baseline and every help command; check what the light imports load."""
    os.environ.setdefault("COLUMNS", "100")
    base_cpu, base_wall = timed(BASELINE)
    result = [
        Row("startup import typer, rich (CPU)", base_cpu, "s"),
        Row("startup import typer, rich (wall)", base_wall, "s"),
    ]
    limit = min(TARGET_S, TARGET_RATIO * base_cpu)
    for args in COMMANDS:
        cpu, wall = timed([WIKIREACT, *args])
        name = f"startup wikireact {' '.join(args)}"
        result.append(
            Row(
                f"{name} (CPU)",
                cpu,
                "s",
                f"<= {limit:.3f} s ({cpu / base_cpu:.1f}x)",
                cpu <= limit,
            )
        )
        if args == ["--help"]:
            result.append(Row(f"{name} (wall)", wall, "s"))
    for statement in (
        "import wikireact.errors",
        "import wikireact.context",
        "import wikireact.cli.app",
    ):
        loaded = heavy_after(statement)
        result.append(
            Row(f"startup `{statement}`: heavy packages", len(loaded), "", "= 0", not loaded)
        )
    return result


if __name__ == "__main__":
    from table import print_rows

    sys.exit(print_rows(rows()))
