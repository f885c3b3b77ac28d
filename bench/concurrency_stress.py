"""Concurrency stress: 4 processes x 8 threads against one checkpoint file and one cache.

All episodes must finish, no `database is locked` may reach a user, and both
files must pass `PRAGMA integrity_check`. Exits 1 otherwise.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.wiki.live import CachedSource
from wikireact.wiki.snapshot import SnapshotDatabase

PROCESSES = 4
THREADS = 8
PAGES = {
    f"Page {i}": f"Page {i} is page number {i}. It has a second sentence. And a third one."
    for i in range(40)
}


def script(worker: int, episode: int) -> list[str]:
    """Each episode searches pages others search too, so the cache sees concurrent writes."""
    pages = [(worker * 7 + episode * 3 + k) % 40 for k in range(3)]
    return [f"Thought: {k}.\nAction: Search[Page {p}]" for k, p in enumerate(pages)] + [
        "Thought: look.\nAction: Lookup[second]",
        "Thought: done.\nAction: Finish[yes]",
    ]


def worker(checkpoints: str, cache: str, index: int) -> dict[str, int]:
    """Run THREADS episodes concurrently in this process."""
    store = SqliteThreads(Path(checkpoints))
    wiki = CachedSource(MemorySource(PAGES), SnapshotDatabase.create(Path(cache)))
    finished = 0
    graphs = [
        build_graph(
            store.saver, model=ScriptedChatModel(outputs=script(index, e), delay_s=0.01), wiki=wiki
        )
        for e in range(THREADS)
    ]
    from concurrent.futures import ThreadPoolExecutor

    def run(e: int) -> str:
        out = graphs[e].invoke(
            {"question": f"q{index}-{e}"},
            {"configurable": {"thread_id": f"w{index}-e{e}"}},
            durability="sync",
        )
        return str(out["status"])

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        statuses = list(pool.map(run, range(THREADS)))
    finished = statuses.count("finished")
    return {"finished": finished, "episodes": THREADS}


def main() -> int:
    """Start the processes, gather their results, check the files."""
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        checkpoints, cache = str(Path(tmp) / "threads.db"), str(Path(tmp) / "cache.db")
        SqliteThreads(Path(checkpoints)).close()
        SnapshotDatabase.create(Path(cache)).conn.close()
        start = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--worker", checkpoints, cache, str(i)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(PROCESSES)
        ]
        results = [p.communicate(timeout=600) for p in procs]
        wall = time.perf_counter() - start
        failures = [err for (out, err), p in zip(results, procs, strict=True) if p.returncode != 0]
        finished = sum(
            json.loads(out)["finished"]
            for (out, _), p in zip(results, procs, strict=True)
            if p.returncode == 0
        )
        locked = sum("database is locked" in err for _, err in results)
        checks = {
            name: sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0]
            for name, path in (("checkpoints", checkpoints), ("cache", cache))
        }
        cached = (
            sqlite3.connect(cache)
            .execute("SELECT count(*) FROM pages WHERE kind = 'page'")
            .fetchone()[0]
        )
    total = PROCESSES * THREADS
    print(
        f"episodes finished {finished}/{total} in {wall:.1f} s; 'database is locked' errors {locked}; "
        f"integrity: checkpoints {checks['checkpoints']}, cache {checks['cache']}; pages cached {cached}"
    )
    for err in failures:
        print("WORKER FAILED:", err[-800:])
    ok = finished == total and not locked and not failures and set(checks.values()) == {"ok"}
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
