"""End a shared evaluation worker's lock session mid-run, start a second worker, then resume.

Each trial plays `tests/lost_lock_scenario.py` on a fresh database of a throwaway
PostgreSQL cluster: worker A (`wikireact eval --db URL --run shared`, 2 episodes at a time,
0.4 s per model call) has its session ended by the server (`pg_terminate_backend`) while
it is inside its first episodes; worker B starts at once; then A runs again with
`--resume`. Exits 1 unless every trial went as it must (`Outcome.problems`: A stops with
one line, each (question, seed) recorded once, no forked thread, an uninterrupted run's
checkpoints, and no model call made twice but one A had in flight when its session ended).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from lost_lock_scenario import QUESTIONS, Outcome, run_scenario  # noqa: E402

from wikireact.storage.postgres.cluster import PgCluster  # noqa: E402

TRIALS = 3


def main() -> int:
    """Run the trials and print their figures."""
    start = time.perf_counter()
    cluster = PgCluster.start()
    outcomes: list[Outcome] = []
    try:
        for _ in range(TRIALS):
            with tempfile.TemporaryDirectory() as tmp:
                outcomes.append(run_scenario(cluster, Path(tmp)))
    finally:
        cluster.stop()
    failures = [(i, p) for i, o in enumerate(outcomes) for p in o.problems()]
    calls = sum(sum(o.calls.values()) for o in outcomes)
    print(
        f"PostgreSQL lost lock connection: trials {TRIALS}, questions {QUESTIONS} each, "
        f"worker stopped with one line {sum(bool(o.fenced_line) for o in outcomes)}/{TRIALS}, "
        f"recorded once {sum(len(set(o.recorded)) == len(o.recorded) == QUESTIONS for o in outcomes)}/{TRIALS}, "
        f"forked threads {sum(len(o.forks) for o in outcomes)}, "
        f"checkpoints as uninterrupted {sum(o.steps_per_thread == o.reference_steps for o in outcomes)}/{TRIALS}, "
        f"model calls {calls}, paid twice {sum(o.repeated_calls for o in outcomes)} "
        f"(all in flight when the session ended: {'yes' if not failures else 'no'}), "
        f"wall {time.perf_counter() - start:.0f} s"
    )
    for trial, problem in failures:
        print(f"TRIAL {trial}: {problem}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
