"""Kill episodes with SIGKILL at random moments, resume each in a new process, and compare.

Every episode runs in a subprocess (scripted model waiting per call, SQLite checkpoints
with durability="sync": each superstep's checkpoint is on disk before the next starts).
It is killed at a random moment, resumed in a fresh process (possibly killed again), and
its final trajectory and answer must equal an uninterrupted run's: no step lost or
duplicated. Exits 1 on any mismatch or if fewer than 30 kills landed mid-episode.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.graph import run_to_end

EPISODES = 36
MIN_MID_EPISODE_KILLS = 30
DELAY_S = 0.25
PAGES = {f"Page {i}": " ".join(f"Page {i} sentence {j} is about topic{j % 5}." for j in range(40)) for i in range(4)}
SCRIPT = [
    "Thought: first.\nAction: Search[Page 0]", "Thought: a.\nAction: Lookup[topic1]",
    "Thought: b.\nAction: Lookup[topic1]", "Thought: c.\nAction: Serch[Page 1]",
    "Thought: d.\nAction: Search[Page 1]", "Thought: e.\nAction: Lookup[topic3]",
    "Thought: f.\nAction: Search[Page 0]", "Thought: g.\nAction: Search[Page 2]",
    "Thought: h.\nAction: Lookup[sentence 7]", "Thought: done.\nAction: Finish[topic3]",
]


def episode(db: str, thread_id: str) -> dict:
    """Run or resume one episode to its end and return the final state."""
    conn = sqlite3.connect(db, check_same_thread=False)
    graph = build_graph(SqliteSaver(conn), model=ScriptedChatModel(outputs=SCRIPT, delay_s=DELAY_S),
                        wiki=MemorySource(PAGES))
    config = {"configurable": {"thread_id": thread_id}}
    return run_to_end(graph, "What is the topic?", config, Context(max_steps=12))


def progress(db: str, thread_id: str) -> int:
    """Return the steps recorded so far in the thread (0 if none)."""
    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        graph = build_graph(SqliteSaver(conn))
        return int(graph.get_state({"configurable": {"thread_id": thread_id}}).values.get("steps", 0))
    finally:
        conn.close()


def worker_command(db: str, thread_id: str) -> list[str]:
    """Return the command that runs one episode in a new process."""
    return [sys.executable, __file__, "--worker", db, thread_id]


def run_one(index: int, tmp: Path, reference: dict, rng: random.Random) -> tuple[int, bool, str]:
    """Kill one episode at a random moment, resume it, compare. Returns (mid-episode kills, ok, note)."""
    db, thread_id = str(tmp / f"e{index}.db"), f"t{index}"
    kills = 0
    for _attempt in range(3):  # up to three kills per episode, then run to the end
        proc = subprocess.Popen(worker_command(db, thread_id), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(1.5, 4.5))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        steps = progress(db, thread_id) if Path(db).exists() else 0
        if 0 < steps < len(SCRIPT):
            kills += 1
    final = subprocess.run(worker_command(db, thread_id), capture_output=True, text=True, timeout=120)
    if final.returncode != 0:
        return kills, False, final.stderr[-500:]
    result = json.loads(final.stdout)
    same = result["trajectory"] == reference["trajectory"] and result["answer"] == reference["answer"]
    if same:
        return kills, True, ""
    got, want = [s["action"] for s in result["trajectory"]], [s["action"] for s in reference["trajectory"]]
    first = next((i for i, (a, b) in enumerate(zip(result["trajectory"], reference["trajectory"])) if a != b), None)
    detail = "" if first is None else f"; step {first + 1}: {result['trajectory'][first]} != {reference['trajectory'][first]}"
    return kills, False, f"episode {index} differs: {got} vs {want}{detail}"


def main() -> int:
    """Run the experiment and print its figures."""
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print(json.dumps(episode(sys.argv[2], sys.argv[3])))
        return 0
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        reference = episode(str(tmp / "reference.db"), "ref")
        rng = random.Random(11)
        seeds = [random.Random(rng.random()) for _ in range(EPISODES)]
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=3) as pool:
            results = list(pool.map(lambda i: run_one(i, tmp, reference, seeds[i]), range(EPISODES)))
    kills = sum(k for k, _, _ in results)
    mismatches = [note for _, ok, note in results if not ok]
    print(f"episodes {EPISODES}, steps per episode {reference['steps']}, SIGKILLs mid-episode {kills}, "
          f"identical after resume {EPISODES - len(mismatches)}/{EPISODES}, "
          f"wall {time.perf_counter() - start:.0f} s")
    for note in mismatches:
        print("MISMATCH:", note)
    if kills < MIN_MID_EPISODE_KILLS:
        print(f"too few mid-episode kills ({kills} < {MIN_MID_EPISODE_KILLS})")
    return 0 if not mismatches and kills >= MIN_MID_EPISODE_KILLS else 1


if __name__ == "__main__":
    sys.exit(main())
