"""Startup: `wikireact --help`, `--version` and each command's `-h` against `import typer, rich`.

Each command runs `RUNS` times as a fresh process (the installed console script, next to
this Python); a figure is the least CPU time (user + system) of its runs, which a busy
machine disturbs far less than wall time (also shown, least of the runs). Targets (issue
26): at most 0.3 s, and at most 6x `python -c "import typer, rich"` measured in the same
run. Also checked: which heavy packages `import wikireact.errors`, `wikireact.context` and
`--help` load (none of LangGraph, LangChain).

`ask`'s time to its first step: a whole `wikireact ask` of one scripted step (Finish) on a
one-page snapshot and a SQLite `--db`, against `python -c "import langgraph.graph"` (what any
LangGraph program pays), the two run in turns so that both meet the same load. Target (issue
37): at most 1.15x. Measure where the rest goes with `python -X importtime -m wikireact ask ...`.
Measured in one process after `import langgraph.graph` (0.85 s CPU on a loaded 2-core
machine), `ask` added 0.26 s: typer and rich 0.10 s (the CLI itself), LangChain's chat-model
classes 0.04 s (any model), wikireact's own modules 0.06 s, the one-step episode 0.065 s.
psycopg (0.3-0.7 s) is no longer among them; LangSmith is, but `import langgraph.graph`
already loads it (as it loads rich and click, through httpx). Python's cyclic garbage
collector took about a seventh of either side's CPU, traversing the long-lived objects
imports make again and again: `ask` pauses it while it starts and freezes those objects
before its episode (`wikireact.cli.common.pause_gc`), so it now costs 0.88-0.92x of
`import langgraph.graph` (1.07x of the same import with the collector off; 1.32-1.38x
before), loaded machine, late 2026.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
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
ASK_TARGET_RATIO = 1.15
LANGGRAPH = [sys.executable, "-c", "import langgraph.graph"]
ONE_STEP = ["Thought 1: Ed Wood was American.\nAction 1: Finish[yes]"]


def run_once(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run `argv` once; return its (CPU seconds, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def timed(argv: list[str]) -> tuple[float, float]:
    """Return the least (CPU seconds, wall seconds) of `RUNS` runs of `argv`."""
    cpu, wall = zip(*(run_once(argv) for _ in range(RUNS)), strict=True)
    return min(cpu), min(wall)


def ask_rows() -> list[Row]:
    """Time a one-step `ask` on SQLite against `import langgraph.graph`, in turns."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {**os.environ, "WIKIREACT_DATA_DIR": str(folder / "data")}
        env.pop("WIKIREACT_MODEL", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as an installed package is
        pages = folder / "pages.jsonl"
        pages.write_text(json.dumps({"title": "Ed Wood", "text": "Ed Wood was American."}) + "\n")
        snapshot, script = folder / "wiki.db", folder / "script.json"
        script.write_text(json.dumps(ONE_STEP))
        run_once([WIKIREACT, "snapshot", "import", str(pages), "--out", str(snapshot)], env)
        ask = [WIKIREACT, "ask", "Were they American?", "--model", f"scripted:{script}"]
        ask += ["--wiki", str(snapshot), "--db", str(folder / "threads.db")]
        base, asked = [], []
        run_once(ask, env)  # writes the bytecode of the modules `ask` imports
        for _ in range(RUNS):
            base.append(run_once(LANGGRAPH, env)[0])
            asked.append(run_once(ask, env)[0])
    ratio = min(asked) / min(base)
    return [
        Row("startup import langgraph.graph (CPU)", min(base), "s"),
        Row(
            "startup wikireact ask, one scripted step, SQLite (CPU)",
            min(asked),
            "s",
            f"<= {ASK_TARGET_RATIO:.2f}x ({ratio:.2f}x)",
            ratio <= ASK_TARGET_RATIO,
        ),
    ]


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
    return result + ask_rows()


if __name__ == "__main__":
    from table import print_rows

    sys.exit(print_rows(rows()))
