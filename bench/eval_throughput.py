"""Eval throughput: 64 questions, a scripted model waiting 200 ms per call.

Runs at concurrency 1 once and at concurrency 16 three times (median). Prints the wall
times, the speedup and the efficiency = speedup / 16 (target: >= 0.9).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from table import Row, print_rows

from wikireact import MemorySource, ScriptedChatModel
from wikireact.eval.harness import EvalConfig
from wikireact.eval.run import run_eval

QUESTIONS = 64
DELAY_S = 0.2
CONCURRENCY = 16
PARALLEL_RUNS = 3
TARGET_EFFICIENCY = 0.9
SCRIPT = ["Thought: look.\nAction: Search[Ed Wood]", "Thought: done.\nAction: Finish[American]"]
WIKI = {"Ed Wood": "Ed Wood was an American filmmaker. He was born in 1924."}


def write_questions(path: Path, count: int) -> Path:
    """Write `count` questions answered by `SCRIPT` over `WIKI` (JSONL) to `path`; return it."""
    path.write_text(
        "".join(
            json.dumps(
                {"_id": f"q{i}", "question": f"Question {i} about Ed Wood?", "answer": "American"}
            )
            + "\n"
            for i in range(count)
        )
    )
    return path


def wall_time(concurrency: int, tmp: Path) -> float:
    """Seconds to evaluate all questions at this concurrency."""
    dataset = write_questions(tmp / "questions.jsonl", QUESTIONS)
    config = EvalConfig(
        dataset=str(dataset),
        method="react",
        model="scripted",
        wiki="memory",
        sample_seed=None,
        concurrency=concurrency,
    )
    start = time.perf_counter()
    report = run_eval(
        config,
        tmp / f"out-{concurrency}-{time.monotonic_ns()}",
        model=ScriptedChatModel(outputs=SCRIPT, delay_s=DELAY_S),
        wiki=MemorySource(WIKI),
    )
    elapsed = time.perf_counter() - start
    assert report["metrics"]["mean"]["em"] == 1.0
    return elapsed


def run() -> dict[str, float]:
    """Measure both concurrencies and return the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        serial = wall_time(1, Path(tmp))
        parallel = statistics.median(
            wall_time(CONCURRENCY, Path(tmp)) for _ in range(PARALLEL_RUNS)
        )
    return {
        "eval wall s, concurrency 1": serial,
        "eval wall s, concurrency 16": parallel,
        "eval speedup": serial / parallel,
        "eval efficiency": serial / parallel / CONCURRENCY,
    }


def rows() -> list[Row]:
    """Return the figures as table rows."""
    figures = run()
    return [
        Row("eval wall, 64 q, concurrency 1", figures["eval wall s, concurrency 1"], "s"),
        Row(
            f"eval wall, 64 q, concurrency 16 (median of {PARALLEL_RUNS})",
            figures["eval wall s, concurrency 16"],
            "s",
        ),
        Row("eval speedup 16 vs 1", figures["eval speedup"], "x"),
        Row(
            "eval efficiency (speedup / 16)",
            figures["eval efficiency"],
            "",
            f">= {TARGET_EFFICIENCY}",
            figures["eval efficiency"] >= TARGET_EFFICIENCY,
        ),
    ]


def main() -> int:
    """Print the figures and compare the speedup with its target."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
