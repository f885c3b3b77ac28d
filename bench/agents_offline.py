"""The four agents with the embedded model (Gemma 3 270M) on the offline single-hop question set.

Runs `wikireact eval --offline --method M --limit N` (a fresh process per method, the same
sampled questions for all) for ReAct, ReWOO, Plan-and-Execute and Reflexion, reads each
run's report.json and prints per question: EM, F1, model calls, input and output tokens,
Wikipedia requests, and CPU seconds (of the eval process, less disturbed by other load on
a shared machine than the wall clock, also printed). Each method runs with the settings
`eval` gives it: Reflexion as the harness runs it (gold answer or not: see its records'
`trials`), its default 3 trials. Every agent on all three offline sets: offline_table.py.
About 11 minutes for the default 4 questions on a busy 2-core machine (ReWOO's and
Plan-and-Execute's planners decode freely and long): not part of `make bench`.

    python agents_offline.py [--limit 4] [--methods react,rewoo,plan-execute,reflexion] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from table import Row, print_rows

QUESTIONS = Path(__file__).resolve().parents[1] / "tests" / "data" / "offline_single_hop.json"
METHODS = ("react", "rewoo", "plan-execute", "reflexion")


def children_cpu() -> float:
    """Return the CPU seconds (user + system) of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(method: str, limit: int, out: Path) -> dict[str, float]:
    """Run `wikireact eval --offline` with `method` on `limit` questions; return its figures."""
    command = [
        *(sys.executable, "-m", "wikireact", "eval", "run", str(QUESTIONS)),
        *("--offline", "--method", method, "--limit", str(limit), "--out", str(out / method)),
    ]
    cpu, wall = children_cpu(), time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    cpu, wall = children_cpu() - cpu, time.perf_counter() - wall
    report = json.loads((out / method / "report.json").read_text(encoding="utf-8"))
    mean = report["metrics"]["mean"]
    records = (out / method / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    n = len(records)
    return {
        "em": mean["em"],
        "f1": mean["f1"],
        "model_calls": mean["model_calls"],
        "input_tokens": mean["input_tokens"],
        "output_tokens": mean["output_tokens"],
        "wiki_requests": mean["wiki_requests_per_question"],
        "cpu_s": cpu / n,
        "wall_s": wall / n,
    }


def rows(figures: dict[str, dict[str, float]]) -> list[Row]:
    """Turn each method's figures into table rows (no targets: a small model, a small sample)."""
    out: list[Row] = []
    for method, f in figures.items():
        out += [
            Row(f"{method}: EM", 100 * f["em"], "%"),
            Row(f"{method}: F1", 100 * f["f1"], "%"),
            Row(f"{method}: model calls per question", f["model_calls"], ""),
            Row(f"{method}: input tokens per question", f["input_tokens"], ""),
            Row(f"{method}: output tokens per question", f["output_tokens"], ""),
            Row(f"{method}: wiki requests per question", f["wiki_requests"], ""),
            Row(f"{method}: CPU s per question", f["cpu_s"], "s"),
            Row(f"{method}: wall s per question", f["wall_s"], "s"),
        ]
    return out


def main() -> int:
    """Run the methods in turn and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=4, help="questions (default: 4)")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here")
    args = parser.parse_args()
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        for method in args.methods.split(","):
            figures[method] = measure(method, args.limit, out)
            print(f"ran {method}: {figures[method]}", file=sys.stderr, flush=True)
    return print_rows(rows(figures))


if __name__ == "__main__":
    sys.exit(main())
