"""Kill LATS searches with SIGKILL at random moments, resume each, and compare.

Each search (three iterations: nine tree nodes, ten model calls, three Searches; the
script of tests/agents/lats_worker.py) runs in a subprocess on its own SQLite checkpoint
file (the CLI's saver) with durability "sync", a scripted model and a Wikipedia source
that each wait `DELAY_S` per call. It is killed at a random moment, up to `KILLS_PER_RUN`
times, then resumed to its end in a fresh process. Its final values (answer, status,
tree, node stats, trajectory, usage, audit without times) must equal an uninterrupted
run's, and a resume must not repeat saved work: the model calls and the page fetches
made in all processes may each exceed the run's own by at most one per kill (the one in
flight). Exits 1 otherwise, or if fewer than `MIN_KILLS` kills landed.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "agents"))

from lats_worker import SEARCH, SEARCHES, comparable, run  # noqa: E402

WORKER = Path(__file__).resolve().parents[1] / "tests" / "agents" / "lats_worker.py"
SEARCHES_RUN = 12
KILLS_PER_RUN = 3
MIN_KILLS = 20
DELAY_S = 0.15


def count(log: Path) -> int:
    """Return the lines of a call or fetch log (0 when nothing was logged)."""
    return len(log.read_text().split("\n")) - 1 if log.exists() else 0


def run_one(index: int, tmp: Path, reference: dict[str, Any], rng: random.Random) -> dict:
    """Kill one search up to `KILLS_PER_RUN` times at random moments, resume it, compare."""
    db, calls, fetches = (tmp / f"s{index}.{ext}" for ext in ("db", "calls", "fetches"))
    command = [sys.executable, str(WORKER), str(db), str(DELAY_S), str(calls), str(fetches)]
    kills = 0
    for _attempt in range(KILLS_PER_RUN):
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        proc.stderr.readline()  # "ready": imports done
        time.sleep(rng.uniform(0.05, 1.2))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
    final = subprocess.run(command, capture_output=True, text=True, timeout=300)
    same = final.returncode == 0 and comparable(json.loads(final.stdout)) == reference
    return {
        "kills": kills,
        "same": same,
        "extra_calls": count(calls) - len(SEARCH),
        "extra_fetches": count(fetches) - SEARCHES,
    }


def main() -> int:
    """Run the experiment and print its figures."""
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        logs = [str(tmp / "ref.calls"), str(tmp / "ref.fetches")]
        reference = comparable(run(str(tmp / "reference.db"), 0.0, *logs))
        rng = random.Random(40)
        seeds = [random.Random(rng.random()) for _ in range(SEARCHES_RUN)]
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(
                pool.map(lambda i: run_one(i, tmp, reference, seeds[i]), range(SEARCHES_RUN))
            )
    kills = sum(r["kills"] for r in results)
    same = sum(r["same"] for r in results)
    calls = sum(r["extra_calls"] for r in results)
    fetches = sum(r["extra_fetches"] for r in results)
    too_many = [r for r in results if max(r["extra_calls"], r["extra_fetches"]) > r["kills"]]
    print(
        f"LATS on SQLite: searches {SEARCHES_RUN} (tree of {len(reference['tree'])} nodes, "
        f"{len(SEARCH)} model calls, {SEARCHES} Searches each), SIGKILLs {kills}, identical "
        f"answer and tree after resume {same}/{SEARCHES_RUN}, model calls repeated {calls}, "
        f"Searches repeated {fetches} (at most one of each per kill: "
        f"{'yes' if not too_many else 'NO'}), wall {time.perf_counter() - start:.0f} s"
    )
    return 0 if same == SEARCHES_RUN and not too_many and kills >= MIN_KILLS else 1


if __name__ == "__main__":
    sys.exit(main())
