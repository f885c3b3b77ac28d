"""Checkpoint growth: bytes on disk per episode against the distinct content it holds.

Episodes of 8, 32 and 128 steps open a new 500-sentence page every 4 steps and look up
keywords in between, checkpointed with the project's SQLite saver (`ThreadStore`, as the
CLI and the eval use it). Distinct content = the text of every page read once + the
history (JSON of the trajectory). Bytes on disk = the thread's file after a WAL
checkpoint, minus the same file holding no thread. Target: at most 2x the distinct
content, growing linearly with steps.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from table import Row, print_rows

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.threads import ThreadStore

LENGTHS = (8, 32, 128)
TARGET_RATIO = 2.0
PAGES = {f"Page {i}": " ".join(f"Sentence {j} of page {i} is about topic{j % 50} and more." for j in range(500))
         for i in range(40)}


def script(steps: int) -> list[str]:
    """Search a new page every 4 steps, Lookup in between, Finish on the last step."""
    out = [f"Thought: step {k}.\nAction: Search[Page {k // 4}]" if k % 4 == 0
           else f"Thought: step {k}.\nAction: Lookup[topic{k % 50}]" for k in range(steps - 1)]
    return [*out, "Thought: done.\nAction: Finish[topic1]"]


def file_bytes(store: ThreadStore) -> int:
    """Return the size of the checkpoint file with its WAL folded in."""
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store.path.stat().st_size


def measure(steps: int, tmp: Path) -> tuple[int, int]:
    """Return (bytes on disk, distinct content bytes) for one episode of `steps` steps."""
    store = ThreadStore(tmp / f"growth-{steps}.db")
    empty = file_bytes(store)
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=script(steps)), wiki=MemorySource(PAGES))
    out = graph.invoke({"question": "What is it about?"}, {"configurable": {"thread_id": "t"}},
                       context=Context(max_steps=steps, repetition_limit=steps), durability="sync")
    assert out["steps"] == steps and out["status"] == "finished", out["status"]
    pages_read = {s["action"][7:-1] for s in out["trajectory"] if s["action"].startswith("Search[")}
    distinct = sum(len(PAGES[p].encode()) for p in pages_read) + len(json.dumps(out["trajectory"]).encode())
    used = file_bytes(store) - empty
    store.close()
    return used, distinct


def rows() -> list[Row]:
    """Return the figures as table rows."""
    out, per_step = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for steps in LENGTHS:
            used, distinct = measure(steps, Path(tmp))
            ratio = used / distinct
            per_step.append(used / steps)
            out.append(Row(f"checkpoint KiB, {steps}-step episode", used / 1024, "KiB", f"distinct {distinct / 1024:.0f} KiB"))
            out.append(Row(f"checkpoint / distinct, {steps} steps", ratio, "x", f"<= {TARGET_RATIO}", ratio <= TARGET_RATIO))
    growth = per_step[-1] / per_step[0]
    out.append(Row("bytes per step, 128 vs 8 steps", growth, "x", "<= 1.5 (linear)", growth <= 1.5))
    return out


def main() -> int:
    """Print the figures."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
