"""Keeping a store: 200 threads pruned thread by thread, bytes before and after, 10,000-thread speed.

On a SQLite file and on PostgreSQL (a throwaway cluster, `wikireact.storage.postgres.cluster`):

1. 200 threads of a scripted 4-step episode: 150 finished, 50 out of budget at step 2.
   Every thread's `get_state` (values, next, metadata, time) and `history --json` are
   read, the store is pruned to each thread's latest checkpoint (`threads prune --all`'s
   code, delta channels written whole), read again and compared thread by thread; each
   finished thread is invoked again (nothing to run: the same output), each out-of-budget
   one resumed with a larger budget (the same answer and trajectory as a finished one).
   Bytes: the store before, after pruning, after `vacuum` (SQLite `VACUUM`; PostgreSQL
   `VACUUM FULL`: plain VACUUM keeps the file's size).
2. 10,000 threads (one real thread copied with `copy_thread`, each registered): the time
   of `threads list`'s and `threads stats`' queries and of pruning all of them
   (threads/s).

`python bench/threads_store.py [THREADS]` (default 10,000) prints one table; a mismatch
in part 1 fails it.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from table import Row, print_rows

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.agents.channels import agent_channels
from wikireact.episode.audit import history_json
from wikireact.errors import PgUnavailableError
from wikireact.models.scripted import ScriptOutput
from wikireact.storage import catalog
from wikireact.storage.postgres.cluster import PgCluster
from wikireact.storage.retention import prune_threads
from wikireact.storage.threads import Threads, open_threads

QUESTION = "Were Scott Derrickson and Ed Wood of the same nationality?"
PAGES = {
    "Scott Derrickson": "Scott Derrickson (born July 16, 1966) is an American director. "
    "He lives in Los Angeles. Derrickson was born in Denver, Colorado.",
    "Ed Wood": "Edward Davis Wood Jr. was an American filmmaker. "
    "Wood was born in Poughkeepsie, New York. He died in Los Angeles.",
}
RUN: list[ScriptOutput] = [
    "Thought 1: Derrickson first.\nAction 1: Search[Scott Derrickson]",
    "Thought 2: Now Ed Wood.\nAction 2: Search[Ed Wood]",
    "Thought 3: Where was Wood born?\nAction 3: Lookup[born]",
    "Thought 4: Both are American.\nAction 4: Finish[yes]",
]
FINISHED, OUT_OF_BUDGET = 150, 50


def config(thread_id: str) -> Any:
    """Return the config of a thread."""
    return {"configurable": {"thread_id": thread_id}}


def run_thread(store: Threads, thread_id: str, max_steps: int) -> None:
    """Register and run one scripted episode on `store`."""
    context = Context(max_steps=max_steps)
    store.register(thread_id, QUESTION, context)
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=RUN), wiki=MemorySource(PAGES))
    graph.invoke({"question": QUESTION}, config(thread_id), context=context)


def reads(store: Threads, graph: Any, thread_id: str) -> tuple[Any, ...]:
    """Return what a reader sees of a thread: its state and its `history --json`."""
    state = graph.get_state(config(thread_id))
    audit = history_json(thread_id, QUESTION, store.context_fields(thread_id), dict(state.values))
    return state.values, state.next, state.metadata, state.created_at, audit


def two_hundred(store: Threads) -> list[Row]:
    """Part 1 on one store; its rows."""
    ids = [f"f{i:03d}" for i in range(FINISHED)] + [f"b{i:03d}" for i in range(OUT_OF_BUDGET)]
    for thread_id in ids:
        run_thread(store, thread_id, 2 if thread_id[0] == "b" else 10)
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=RUN), wiki=MemorySource(PAGES))
    before = {t: reads(store, graph, t) for t in ids}
    outputs = {t: graph.invoke(None, config(t)) for t in ids if t[0] == "f"}
    size, stats = catalog.store_bytes(store), catalog.store_stats(store)
    start = time.perf_counter()
    outcome = prune_threads(
        store, catalog.list_threads(store), channels_of=agent_channels, dry_run=False
    )
    pruned_s = time.perf_counter() - start
    after = {t: reads(store, graph, t) for t in ids}
    same = sum(before[t] == after[t] for t in ids)
    invoked = sum(graph.invoke(None, config(t)) == outputs[t] for t in outputs)
    resumed = 0
    for thread_id in (t for t in ids if t[0] == "b"):
        graph.update_state(config(thread_id), {"status": "running"}, as_node="observe")
        out = graph.invoke(None, config(thread_id), context=Context(max_steps=5))
        finished = before["f000"][0]
        resumed += (out["answer"], out["trajectory"]) == (
            finished["answer"],
            finished["trajectory"],
        )
    pruned, pruned_tables = (
        catalog.store_bytes(store),
        sum(catalog.store_stats(store).tables.values()),
    )
    catalog.vacuum(store, full=True)
    vacuumed, vacuumed_tables = (
        catalog.store_bytes(store),
        sum(catalog.store_stats(store).tables.values()),
    )
    name = type(store).__name__.removesuffix("Threads")
    return [
        Row(
            f"{name}: threads reading the same after prune",
            same,
            "",
            f"= {len(ids)}",
            same == len(ids),
        ),
        Row(
            f"{name}: finished threads invoked again, same output",
            invoked,
            "",
            f"= {FINISHED}",
            invoked == FINISHED,
        ),
        Row(
            f"{name}: out-of-budget threads resumed, same answer",
            resumed,
            "",
            f"= {OUT_OF_BUDGET}",
            resumed == OUT_OF_BUDGET,
        ),
        Row(
            f"{name}: threads pruned (none running)",
            len(outcome.done),
            "",
            f"= {len(ids)}",
            len(outcome.done) == len(ids),
        ),
        Row(f"{name}: checkpoints before prune", stats.checkpoints, ""),
        Row(f"{name}: prune of 200 threads", pruned_s, "s"),
        Row(f"{name}: store bytes before prune", size, "B"),
        Row(f"{name}:   after prune (free pages kept, log)", pruned, "B"),
        Row(f"{name}:   after vacuum", vacuumed, "B", "< before", vacuumed < size),
        Row(f"{name}: table bytes before prune", sum(stats.tables.values()), "B"),
        Row(f"{name}:   after prune", pruned_tables, "B"),
        Row(f"{name}:   after vacuum", vacuumed_tables, "B"),
    ]


def ten_thousand(store: Threads, threads: int) -> list[Row]:
    """Part 2 on one store; its rows."""
    run_thread(store, "template", 10)
    context = Context(max_steps=10)
    start = time.perf_counter()
    for i in range(threads - 1):
        store.saver.copy_thread("template", f"c{i:05d}")
        store.register(f"c{i:05d}", QUESTION, context)
    built = time.perf_counter() - start
    start = time.perf_counter()
    infos = catalog.list_threads(store)
    listed = time.perf_counter() - start
    start = time.perf_counter()
    catalog.store_stats(store)
    stats = time.perf_counter() - start
    start = time.perf_counter()
    done = prune_threads(store, infos, channels_of=agent_channels, dry_run=False).done
    pruned = time.perf_counter() - start
    assert len(infos) == len(done) == threads, (len(infos), len(done))
    name = type(store).__name__.removesuffix("Threads")
    return [
        Row(f"{name}: build {threads:,} threads (copy_thread + register)", built, "s"),
        Row(f"{name}: threads list, {threads:,} threads", listed, "s"),
        Row(f"{name}: threads stats, {threads:,} threads", stats, "s"),
        Row(f"{name}: prune {threads:,} threads", pruned, "s"),
        Row(f"{name}:   prune throughput", threads / pruned, "thr/s"),
    ]


def rows(threads: int = 10_000) -> list[Row]:
    """Return the figures of both parts on both stores."""
    out: list[Row] = []
    try:
        cluster: PgCluster | None = PgCluster.start()
    except PgUnavailableError as exc:
        print(f"PostgreSQL unavailable, SQLite only: {exc}", file=sys.stderr)
        cluster = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for part in (two_hundred, ten_thousand):
                targets = [str(Path(tmp) / f"{part.__name__}.db")]
                if cluster is not None:
                    targets.append(cluster.create_database())
                for target in targets:
                    store = open_threads(target)
                    try:
                        out += part(store) if part is two_hundred else part(store, threads)  # type: ignore[call-arg]
                    finally:
                        store.close()
    finally:
        if cluster is not None:
            cluster.stop()
    return out


def main() -> int:
    """Print the figures."""
    return print_rows(rows(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))


if __name__ == "__main__":
    sys.exit(main())
