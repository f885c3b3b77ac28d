"""Kill episodes with SIGKILL at random moments, resume each in a new process, and compare.

Every episode runs in a subprocess (scripted model waiting per call, SQLite checkpoints
with durability="sync": each superstep's checkpoint is on disk before the next starts).
It is killed at a random moment (0.2-3.2 s after its imports finish, so a loaded machine
still kills mid-episode), resumed in a fresh process (possibly killed again), and
its final trajectory and answer must equal an uninterrupted run's: no step lost or
duplicated. Exits 1 on any mismatch or if fewer than 30 kills landed mid-episode.

`--postgres` runs the same on a throwaway PostgreSQL cluster (`PostgresSaver`, one
database for all episodes) instead of SQLite files.
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.graph import run_to_end
from wikireact.storage.postgres.cluster import PgCluster
from wikireact.storage.threads import is_postgres_url, open_threads

EPISODES = 36
MIN_MID_EPISODE_KILLS = 30
DELAY_S = 0.25
PAGES = {
    f"Page {i}": " ".join(f"Page {i} sentence {j} is about topic{j % 5}." for j in range(40))
    for i in range(4)
}
SCRIPT = [
    "Thought: first.\nAction: Search[Page 0]",
    "Thought: a.\nAction: Lookup[topic1]",
    "Thought: b.\nAction: Lookup[topic1]",
    "Thought: c.\nAction: Serch[Page 1]",
    "Thought: d.\nAction: Search[Page 1]",
    "Thought: e.\nAction: Lookup[topic3]",
    "Thought: f.\nAction: Search[Page 0]",
    "Thought: g.\nAction: Search[Page 2]",
    "Thought: h.\nAction: Lookup[sentence 7]",
    "Thought: done.\nAction: Finish[topic3]",
]


@contextlib.contextmanager
def opened(db: str) -> Iterator[BaseCheckpointSaver]:
    """Yield the stock SqliteSaver on a file, or wikireact's PostgreSQL saver for a URL."""
    if is_postgres_url(db):
        store = open_threads(db)
        try:
            yield store.saver
        finally:
            store.close()
    else:
        conn = sqlite3.connect(db, check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()


def episode(db: str, thread_id: str) -> dict:
    """Run or resume one episode to its end and return the final state."""
    with opened(db) as saver:
        graph = build_graph(
            saver,
            model=ScriptedChatModel(outputs=SCRIPT, delay_s=DELAY_S),
            wiki=MemorySource(PAGES),
        )
        config = {"configurable": {"thread_id": thread_id}}
        return run_to_end(graph, "What is the topic?", config, Context(max_steps=12))


def progress(db: str, thread_id: str) -> int:
    """Return the steps recorded so far in the thread (0 if none)."""
    with opened(db) as saver:
        return int(
            build_graph(saver)
            .get_state({"configurable": {"thread_id": thread_id}})
            .values.get("steps", 0)
        )


def worker_command(db: str, thread_id: str) -> list[str]:
    """Return the command that runs one episode in a new process."""
    return [sys.executable, __file__, "--worker", db, thread_id]


def run_one(
    index: int, tmp: Path, reference: dict, rng: random.Random, url: str | None
) -> tuple[int, bool, str]:
    """Kill one episode at a random moment, resume it, compare. Returns (mid-episode kills, ok, note)."""
    db, thread_id = url or str(tmp / f"e{index}.db"), f"t{index}"
    kills = 0
    for _attempt in range(3):  # up to three kills per episode, then run to the end
        proc = subprocess.Popen(
            worker_command(db, thread_id), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stderr is not None
        proc.stderr.readline()  # "ready": imports done (seconds on a loaded machine), episode starting
        time.sleep(rng.uniform(0.2, 3.2))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        steps = progress(db, thread_id) if url or Path(db).exists() else 0
        if 0 < steps < len(SCRIPT):
            kills += 1
    final = subprocess.run(
        worker_command(db, thread_id), capture_output=True, text=True, timeout=120
    )
    if final.returncode != 0:
        return kills, False, final.stderr[-500:]
    result = json.loads(final.stdout)
    same = (
        result["trajectory"] == reference["trajectory"] and result["answer"] == reference["answer"]
    )
    if same:
        return kills, True, ""
    got, want = (
        [s["action"] for s in result["trajectory"]],
        [s["action"] for s in reference["trajectory"]],
    )
    first = next(
        (
            i
            for i, (a, b) in enumerate(
                zip(result["trajectory"], reference["trajectory"], strict=False)
            )
            if a != b
        ),
        None,
    )
    detail = (
        ""
        if first is None
        else f"; step {first + 1}: {result['trajectory'][first]} != {reference['trajectory'][first]}"
    )
    return kills, False, f"episode {index} differs: {got} vs {want}{detail}"


def main() -> int:
    """Run the experiment and print its figures."""
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print("ready", file=sys.stderr, flush=True)
        print(json.dumps(episode(sys.argv[2], sys.argv[3])))
        return 0
    cluster = PgCluster.start() if "--postgres" in sys.argv else None
    url = cluster.create_database() if cluster else None
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            reference = episode(str(tmp / "reference.db"), "ref")
            rng = random.Random(11)
            seeds = [random.Random(rng.random()) for _ in range(EPISODES)]
            start = time.perf_counter()
            with ThreadPoolExecutor(max_workers=3) as pool:
                results = list(
                    pool.map(lambda i: run_one(i, tmp, reference, seeds[i], url), range(EPISODES))
                )
    finally:
        if cluster:
            cluster.stop()
    kills = sum(k for k, _, _ in results)
    mismatches = [note for _, ok, note in results if not ok]
    print(
        f"{'PostgreSQL' if url else 'SQLite'}: episodes {EPISODES}, steps per episode {reference['steps']}, SIGKILLs mid-episode {kills}, "
        f"identical after resume {EPISODES - len(mismatches)}/{EPISODES}, "
        f"wall {time.perf_counter() - start:.0f} s"
    )
    for note in mismatches:
        print("MISMATCH:", note)
    if kills < MIN_MID_EPISODE_KILLS:
        print(f"too few mid-episode kills ({kills} < {MIN_MID_EPISODE_KILLS})")
    return 0 if not mismatches and kills >= MIN_MID_EPISODE_KILLS else 1


if __name__ == "__main__":
    sys.exit(main())
