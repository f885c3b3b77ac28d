"""Checkpoint growth: bytes on disk per episode against the distinct content it holds.

Two workloads, checkpointed with durability="sync" (a checkpoint per superstep) by the
project's SQLite saver (`SqliteThreads`, as the CLI and the eval use it):
- episodes of 8, 32 and 128 steps open a new 500-sentence page every 4 steps and look up
  keywords in between (target: at most 2x the distinct content);
- a realistic reading episode: per page of 400 sentences a Search then 11 Lookups of
  different keywords; 8 pages = 97 steps with the Finish (target: at most 2.0x, issue 35; the stock
  `SqliteSaver` is measured beside it), and 4 pages = 49 steps to check linear growth.
Distinct content = the text of every page read once + the history (JSON of the trajectory).
Bytes on disk = the thread's file after a WAL checkpoint, minus the same file holding no
thread. Both must grow linearly with steps.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from table import Row, print_rows

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.storage.sqlite.threads import SqliteThreads

LENGTHS = (8, 32, 128)
TARGET_RATIO = 2.0
READING_PAGES = (4, 8)
TARGET_READING_RATIO = 2.0
LOOKUPS_PER_PAGE = 11
PAGES = {
    f"Page {i}": " ".join(
        f"Sentence {j} of page {i} is about topic{j % 50} and more." for j in range(500)
    )
    for i in range(40)
}
READING = {
    f"Page {i}": " ".join(
        f"Sentence {j} of page {i} is about topic{j % 50} and more." for j in range(400)
    )
    for i in range(8)
}


def script(steps: int) -> list[str]:
    """Search a new page every 4 steps, Lookup in between, Finish on the last step."""
    out = [
        f"Thought: step {k}.\nAction: Search[Page {k // 4}]"
        if k % 4 == 0
        else f"Thought: step {k}.\nAction: Lookup[topic{k % 50}]"
        for k in range(steps - 1)
    ]
    return [*out, "Thought: done.\nAction: Finish[topic1]"]


def reading_script(pages: int) -> list[str]:
    """Per page a Search then LOOKUPS_PER_PAGE Lookups of different keywords; then Finish."""
    out = []
    for p in range(pages):
        out.append(f"Thought: open page {p}.\nAction: Search[Page {p}]")
        out += [
            f"Thought: find topic{k} on page {p}.\nAction: Lookup[topic{k}]"
            for k in range(LOOKUPS_PER_PAGE)
        ]
    return [*out, "Thought: done.\nAction: Finish[topic1]"]


def file_bytes(conn: sqlite3.Connection, path: Path) -> int:
    """Return the size of the checkpoint file with its WAL folded in."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


def measure(
    outputs: list[str], pages: dict[str, str], path: Path, stock: bool = False
) -> tuple[int, int]:
    """Return (bytes on disk, distinct content bytes) for one episode replaying `outputs`.

    With `stock`, the thread is saved by LangGraph's `SqliteSaver` instead of `SqliteThreads`'s.
    """
    steps = len(outputs)
    store = None if stock else SqliteThreads(path)
    conn = sqlite3.connect(path, check_same_thread=False) if store is None else store.conn
    saver = SqliteSaver(conn) if store is None else store.saver
    saver.setup()
    empty = file_bytes(conn, path)
    graph = build_graph(saver, model=ScriptedChatModel(outputs=outputs), wiki=MemorySource(pages))
    out = graph.invoke(
        {"question": "What is it about?"},
        {"configurable": {"thread_id": "t"}},
        context=Context(max_steps=steps, repetition_limit=steps),
        durability="sync",
    )
    assert out["steps"] == steps and out["status"] == "finished", out["status"]
    pages_read = {s["action"][7:-1] for s in out["trajectory"] if s["action"].startswith("Search[")}
    distinct = sum(len(pages[p].encode()) for p in pages_read) + len(
        json.dumps(out["trajectory"]).encode()
    )
    used = file_bytes(conn, path) - empty
    conn.close()
    return used, distinct


def rows() -> list[Row]:
    """Return the figures as table rows."""
    out, per_step = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for steps in LENGTHS:
            used, distinct = measure(script(steps), PAGES, Path(tmp) / f"growth-{steps}.db")
            ratio = used / distinct
            per_step.append(used / steps)
            out.append(
                Row(
                    f"checkpoint KiB, {steps}-step episode",
                    used / 1024,
                    "KiB",
                    f"distinct {distinct / 1024:.0f} KiB",
                )
            )
            out.append(
                Row(
                    f"checkpoint / distinct, {steps} steps",
                    ratio,
                    "x",
                    f"<= {TARGET_RATIO}",
                    ratio <= TARGET_RATIO,
                )
            )
        growth = per_step[-1] / per_step[0]
        out.append(
            Row("bytes per step, 128 vs 8 steps", growth, "x", "<= 1.5 (linear)", growth <= 1.5)
        )
        reading_per_step = []
        for pages in READING_PAGES:
            outputs = reading_script(pages)
            steps = len(outputs)
            used, distinct = measure(outputs, READING, Path(tmp) / f"reading-{pages}.db")
            reading_per_step.append(used / steps)
            ratio = used / distinct
            out.append(
                Row(
                    f"checkpoint KiB, reading {pages} pages ({steps} steps)",
                    used / 1024,
                    "KiB",
                    f"distinct {distinct / 1024:.0f} KiB",
                )
            )
            out.append(
                Row(
                    f"checkpoint / distinct, reading {steps} steps",
                    ratio,
                    "x",
                    f"<= {TARGET_READING_RATIO}" if pages == 8 else "",
                    ratio <= TARGET_READING_RATIO if pages == 8 else None,
                )
            )
        stock_used, stock_distinct = measure(
            reading_script(8), READING, Path(tmp) / "stock.db", stock=True
        )
        out.append(
            Row(
                f"  stock SqliteSaver, reading {len(reading_script(8))} steps",
                stock_used / stock_distinct,
                "x",
                f"{stock_used / 1024:.0f} KiB",
            )
        )
        growth = reading_per_step[-1] / reading_per_step[0]
        out.append(
            Row(
                f"bytes per step, reading {len(reading_script(8))} vs {len(reading_script(4))} steps",
                growth,
                "x",
                "<= 1.5 (linear)",
                growth <= 1.5,
            )
        )
    return out


def main() -> int:
    """Print the figures."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
