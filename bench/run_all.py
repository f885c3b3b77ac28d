"""`make bench`: every benchmark's figures and targets in one table; exit 1 if a target is missed."""

from __future__ import annotations

import sys
import time

import agents_compare
import checkpoint_growth
import dump_import
import eval_throughput
import model_cache_replay
import parse_speed
import postgres
import report_page
import resume_speed
import snapshot_latency
import startup
import step_length
import step_overhead
from table import Row, print_rows

SUITES = [
    startup,
    step_overhead,
    checkpoint_growth,
    resume_speed,
    step_length,
    eval_throughput,
    agents_compare,
    model_cache_replay,
    snapshot_latency,
    dump_import,
    parse_speed,
    report_page,
    postgres,
]


def main() -> int:
    """Run every suite in turn, then print the combined table."""
    rows: list[Row] = []
    for suite in SUITES:
        start = time.perf_counter()
        rows += suite.rows()
        print(f"ran {suite.__name__} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
