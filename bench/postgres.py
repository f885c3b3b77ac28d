"""PostgreSQL beside SQLite: step time, checkpoint bytes per step, and eval workers.

Starts a throwaway PostgreSQL cluster (`wikireact.storage.postgres.cluster`, as the `postgres` OS user
under root) on localhost and stops it at the end.

- Step time: the 8-step episode of `step_overhead.py` (instant scripted model) with
  durability "sync" (what the CLI and eval use), through `open_threads` on a SQLite file and
  on a PostgreSQL database (the stock `PostgresSaver` on a connection pool).
- Checkpoint bytes per step: the 32- and 128-step episodes of `checkpoint_growth.py`;
  SQLite = file growth after a WAL checkpoint, PostgreSQL = growth of
  `pg_total_relation_size` (tables, TOAST, indexes) of the checkpoint tables.
- Eval throughput: 60 questions (2 model calls each, 200 ms per call) run by one `wikireact
  eval` worker process, then by three worker processes sharing one run (`--db URL --run`),
  each with `--concurrency 1`. Throughput = questions / (last record written - first
  question started), from the run's records in the database: it leaves out the processes'
  start-up (importing LangChain takes seconds, and many more on a loaded machine), which is
  printed separately as wall time. Target: throughput speedup >= 2.7x.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
from checkpoint_growth import PAGES as GROWTH_PAGES
from checkpoint_growth import script as growth_script
from eval_throughput import SCRIPT, write_questions
from step_overhead import PAGES as STEP_PAGES
from step_overhead import SCRIPT as STEP_SCRIPT
from table import Row, print_rows

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import PgUnavailableError
from wikireact.storage.postgres import layout
from wikireact.storage.postgres.cluster import PgCluster
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.storage.threads import Threads, open_threads
from wikireact.wiki.importing.importer import import_file
from wikireact.wiki.snapshot import SnapshotDatabase

REPEATS = 30
GROWTH_LENGTHS = (32, 128)
QUESTIONS = 60
DELAY_S = 0.2
WORKERS = 3
TARGET_SPEEDUP = 2.7
TABLES = layout.TABLES


def step_ms(store: Threads) -> float:
    """Median milliseconds per step of the 8-step episode, durability "sync"."""
    graph = build_graph(
        store.saver, model=ScriptedChatModel(outputs=STEP_SCRIPT), wiki=MemorySource(STEP_PAGES)
    )
    times = []
    for i in range(REPEATS + 1):
        start = time.perf_counter()
        out = graph.invoke(
            {"question": "q"},
            {"configurable": {"thread_id": f"t{i}"}},
            context=Context(max_steps=20),
            durability="sync",
        )
        times.append((time.perf_counter() - start) * 1000 / len(STEP_SCRIPT))
        assert out["answer"] == "topic2"
    return statistics.median(times[1:])


def used_bytes(store: Threads) -> int:
    """Bytes the store's checkpoints take now."""
    if isinstance(store, SqliteThreads):
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return store.path.stat().st_size
    with psycopg.connect(store.url) as conn:  # type: ignore[attr-defined]
        row = conn.execute(
            "SELECT " + " + ".join(f"pg_total_relation_size('{t}')" for t in TABLES)
        ).fetchone()
    return int(row[0]) if row else 0


def bytes_per_step(store: Threads, steps: int) -> float:
    """Checkpoint bytes per step of one `steps`-step episode."""
    before = used_bytes(store)
    graph = build_graph(
        store.saver,
        model=ScriptedChatModel(outputs=growth_script(steps)),
        wiki=MemorySource(GROWTH_PAGES),
    )
    out = graph.invoke(
        {"question": "What is it about?"},
        {"configurable": {"thread_id": f"g{steps}"}},
        context=Context(max_steps=steps, repetition_limit=steps),
        durability="sync",
    )
    assert out["steps"] == steps
    return (used_bytes(store) - before) / steps


def eval_run(url: str, workers: int, tmp: Path) -> tuple[float, float]:
    """Run one shared run with `workers` processes; return (questions per second, wall seconds)."""
    dataset, snapshot, model = tmp / "q.jsonl", tmp / "snap.db", tmp / "model.json"
    if not dataset.exists():
        write_questions(dataset, QUESTIONS)
        pages = tmp / "pages.jsonl"
        pages.write_text(
            json.dumps({"title": "Ed Wood", "text": "Ed Wood was an American filmmaker."}) + "\n"
        )
        import_file(pages, SnapshotDatabase.create(snapshot))
        model.write_text(json.dumps({"outputs": SCRIPT, "delay_s": DELAY_S}))
    command = [
        sys.executable,
        "-m",
        "wikireact",
        "eval",
        str(dataset),
        "--model",
        f"scripted:{model}",
        "--wiki",
        str(snapshot),
        "--concurrency",
        "1",
        "--db",
        url,
        "--run",
        f"w{workers}",
    ]
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [*command, "--out", str(tmp / f"w{workers}-{i}")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(workers)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    elapsed = time.perf_counter() - start
    report = json.loads((tmp / f"w{workers}-0" / "report.json").read_text())
    assert (
        report["metrics"]["mean"]["em"] == 1.0
        and report["metrics"]["per_seed"]["0"]["questions"] == QUESTIONS
    )
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*), max(recorded) - min(started) FROM wikireact_eval_records "
            "WHERE run = %s",
            (f"w{workers}",),
        ).fetchone()
    assert row is not None and row[0] == QUESTIONS
    return row[0] / row[1], elapsed


def rows() -> list[Row]:
    """Return the figures as table rows (one failing row if PostgreSQL cannot start)."""
    try:
        cluster = PgCluster.start()
    except PgUnavailableError as exc:
        print(f"postgres bench: {exc}", file=sys.stderr)
        return [
            Row("PostgreSQL benchmarks (server unavailable)", 0, "", "a PostgreSQL server", False)
        ]
    out: list[Row] = []
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            stores = {
                "SQLite": open_threads(tmp / "steps.db"),
                "PostgreSQL": open_threads(cluster.create_database()),
            }
            for name, store in stores.items():
                out.append(Row(f"step time, sync, {name}", step_ms(store), "ms"))
            for steps in GROWTH_LENGTHS:
                for name in stores:
                    store = open_threads(
                        tmp / f"growth{steps}.db" if name == "SQLite" else cluster.create_database()
                    )
                    out.append(
                        Row(
                            f"checkpoint bytes/step, {steps} steps, {name}",
                            bytes_per_step(store, steps) / 1024,
                            "KiB",
                        )
                    )
                    store.close()
            for store in stores.values():
                store.close()
            url = cluster.create_database()
            one, one_wall = eval_run(url, 1, tmp)
            three, three_wall = eval_run(url, WORKERS, tmp)
    finally:
        cluster.stop()
    speedup = three / one
    out += [
        Row(f"eval throughput, 1 worker (PostgreSQL, {DELAY_S * 1000:.0f} ms/call)", one, "q/s"),
        Row(f"eval throughput, {WORKERS} workers (PostgreSQL)", three, "q/s"),
        Row(
            f"eval throughput speedup {WORKERS} workers vs 1",
            speedup,
            "x",
            f">= {TARGET_SPEEDUP}",
            speedup >= TARGET_SPEEDUP,
        ),
        Row(f"  wall incl. process start-up, {QUESTIONS} q, 1 worker", one_wall, "s"),
        Row(f"  wall incl. process start-up, {QUESTIONS} q, {WORKERS} workers", three_wall, "s"),
    ]
    return out


def main() -> int:
    """Print the figures."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
