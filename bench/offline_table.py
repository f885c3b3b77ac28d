"""`make bench-offline`: every agent with the embedded model on the three offline sets, one table.

Runs `wikireact eval run` (a fresh process per configuration: one agent on one set) with
`--offline` (Gemma 3 270M through llama.cpp, the embedded snapshot) into `OUT/SET/AGENT`,
reads each run's report.json and records, and prints per configuration: EM (FEVER: label
accuracy), finish rate, valid-plan rate (ReWOO and Plan-and-Execute: the share of questions
whose first plan parsed), search misses (`wikireact.eval.categories`: the share of questions
whose episode never opened a needed page), and per question: model calls, input and output
tokens, and CPU seconds of the eval process (model loading included; less disturbed by
other load on a shared machine than the wall clock, also printed).

The sets: `single` (tests/data/offline_single_hop.json), `multi` (two-hop,
tests/data/offline_multi_hop.json) and `fever` (tests/data/offline_claims.jsonl). Each
agent runs with the settings `eval` gives it (Reflexion judged against the gold answers,
3 trials). Hours of CPU for everything on 2 cores: `--sets`, `--agents` and `--limit` run a
part; `--out DIR` keeps the runs, and a second call with the same `--out` reuses finished
configurations and resumes an interrupted one (`eval run --resume`). `--model` and
`--wiki` replace the embedded model and snapshot (a scripted model checks the wiring).

    python offline_table.py [--sets single,multi,fever] [--agents react,act,...] [--limit N]
                            [--out DIR] [--model scripted:FILE.json --wiki PATH.db]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents_offline import children_cpu

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
SETS = {
    "single": (DATA / "offline_single_hop.json", "hotpotqa"),
    "multi": (DATA / "offline_multi_hop.json", "hotpotqa"),
    "fever": (DATA / "offline_claims.jsonl", "fever"),
}
AGENTS = ("react", "act", "rewoo", "plan-execute", "reflexion", "lats")
PLANNERS = ("rewoo", "plan-execute")
FIGURES = "bench.json"
"""What this script measured of a finished configuration (beside eval's own files)."""


@dataclass(frozen=True)
class Run:
    """One configuration: an agent on a set, run into `out`."""

    set_name: str
    agent: str
    out: Path

    @property
    def label(self) -> str:
        """How the table and the progress lines name the configuration."""
        return f"{self.set_name}/{self.agent}"


def eval_command(run: Run, limit: int | None, model: str | None, wiki: str) -> list[str]:
    """Return the `wikireact eval run` command of `run` (the file's first `limit` questions)."""
    dataset, task = SETS[run.set_name]
    source = ("--model", model, "--wiki", wiki) if model else ("--offline",)
    return [
        *(sys.executable, "-m", "wikireact", "eval", "run", str(dataset), *source),
        *("--method", run.agent, "--task", task, "--order", "file", "--out", str(run.out)),
        *(("--limit", str(limit)) if limit else ()),
        *(("--resume",) if (run.out / "settings.json").is_file() else ()),
    ]


def records(run: Run) -> list[dict[str, Any]]:
    """Return the run's records (one per question), those written so far."""
    path = run.out / "trajectories.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def execute(run: Run, limit: int | None, model: str | None, wiki: str) -> dict[str, float] | str:
    """Run (or resume) `run` unless it finished before; return its CPU and wall seconds per question.

    A resumed configuration's seconds are those of the questions this call ran. A run that
    fails returns eval's last line of error instead (a later call resumes it).
    """
    figures = run.out / FIGURES
    if figures.is_file() and (run.out / "report.json").is_file():
        return dict(json.loads(figures.read_text(encoding="utf-8")))
    before = len(records(run))
    cpu, wall = children_cpu(), time.perf_counter()
    command = eval_command(run, limit, model, wiki)
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    cpu, wall = children_cpu() - cpu, time.perf_counter() - wall
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    ran = max(len(records(run)) - before, 1)
    measured = {"cpu_s": cpu / ran, "wall_s": wall / ran}
    figures.write_text(json.dumps(measured), encoding="utf-8")
    return measured


def first_plan_parsed(record: dict[str, Any]) -> bool:
    """Whether the planner's first plan of a ReWOO or Plan-and-Execute record parsed."""
    if "plans" in record:  # Plan-and-Execute: every planning reply, in order
        plans = record.get("plans") or []
        return bool(plans) and plans[0].get("error") is None
    for step in record.get("trajectory") or []:  # ReWOO: the plan, or `Invalid plan: ...`
        if step.get("kind") == "plan":
            return True
        if str(step.get("observation", "")).startswith("Invalid plan:"):
            return False
    return False


def summary(run: Run, seconds: dict[str, float]) -> dict[str, Any]:
    """Return the table's figures of a finished `run`, read from its report and records."""
    metrics = json.loads((run.out / "report.json").read_text(encoding="utf-8"))["metrics"]
    mean, questions = metrics["mean"], records(run)
    count = max(len(questions), 1)
    plans = [first_plan_parsed(r) for r in questions] if run.agent in PLANNERS else None
    return {
        "configuration": run.label,
        "questions": len(questions),
        "score": mean.get("accuracy", mean["em"]),
        "finish": mean["finish_rate"],
        "valid_plan": None if plans is None else sum(plans) / count,
        "search_miss": metrics["categories"].get("search_miss", 0) / count,
        "calls": mean["model_calls"],
        "input_tokens": mean["input_tokens"],
        "output_tokens": mean["output_tokens"],
        **seconds,
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    """Print the figures as one Markdown table (the form docs/offline.md quotes)."""
    print(
        "| set/agent | questions | EM (FEVER: accuracy) | finish | valid plan | search miss "
        "| calls / q | input tokens / q | output tokens / q | CPU s / q | wall s / q |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['configuration']} | failed: {r['error'][:200]} |")
            continue
        plan = "-" if r["valid_plan"] is None else f"{100 * r['valid_plan']:.0f}%"
        print(
            f"| {r['configuration']} | {r['questions']} | {100 * r['score']:.1f}% "
            f"| {100 * r['finish']:.0f}% | {plan} | {100 * r['search_miss']:.0f}% "
            f"| {r['calls']:.2f} | {r['input_tokens']:,.0f} | {r['output_tokens']:,.0f} "
            f"| {r['cpu_s']:.1f} | {r['wall_s']:.1f} |"
        )


def main() -> int:
    """Run the chosen configurations in turn (each once) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS), help="of single, multi, fever")
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--limit", type=int, default=None, help="questions per set (default: all)")
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here (and resume)")
    parser.add_argument("--model", default=None, help="instead of the embedded model")
    parser.add_argument("--wiki", default="offline", help="with --model: the snapshot")
    args = parser.parse_args()
    sets, agents = args.sets.split(","), args.agents.split(",")
    unknown = [s for s in sets if s not in SETS] + [a for a in agents if a not in AGENTS]
    if unknown:
        parser.error(f"unknown set or agent: {', '.join(unknown)}")
    temporary = None if args.out else Path(tempfile.mkdtemp(prefix="offline-table-"))
    out = args.out or temporary
    assert out is not None
    rows = []
    try:
        for set_name in sets:
            for agent in agents:
                run = Run(set_name, agent, out / set_name / agent)
                seconds = execute(run, args.limit, args.model, args.wiki)
                if isinstance(seconds, str):
                    rows.append({"configuration": run.label, "error": seconds})
                else:
                    rows.append(summary(run, seconds))
                print(f"ran {run.label}: {rows[-1]}", file=sys.stderr, flush=True)
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
    print_table(rows)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
