"""Step overhead: what the graph adds per step beyond the ReAct work itself.

An 8-step episode (instant scripted model, in-memory pages) runs through the graph with no
checkpointer, InMemorySaver, the stock SqliteSaver and wikireact's SqliteSaver (the
`SqliteThreads` the CLI and eval use: WAL + synchronous=NORMAL, integer versions, zlib),
with LangGraph's default durability ("async": a checkpoint is written while the next node
runs) and with "sync" (what the CLI and eval use), and as a plain Python loop doing the
same prompt/parse/act/observe work. Target: the graph with wikireact's SqliteSaver adds
at most 3 ms per step, with the default durability and with "sync" (wall time, median).
On a shared machine wall time includes waiting for a core, so the CPU time (all threads)
of the plain loop and of the "sync" graph is printed too, and the part of it spent in the
saver's `put`/`put_writes` (where the rest goes: see docs/performance.md).
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from table import Row, print_rows

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.prompting.quoting import sanitize_observation
from wikireact.prompting.react import STOP_SEQUENCES, build_messages
from wikireact.protocols.text import Action, cut_at_observation, parse_output
from wikireact.state import Step
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.wiki.environment import lookup, search, truncate

REPEATS = 60
TARGET_MS = 3.0
PAGES = {
    f"Page {i}": " ".join(f"Sentence {j} of page {i} mentions topic{j % 9}." for j in range(60))
    for i in range(4)
}
SCRIPT = [
    "Thought: a.\nAction: Search[Page 0]",
    "Thought: b.\nAction: Lookup[topic1]",
    "Thought: c.\nAction: Lookup[topic1]",
    "Thought: d.\nAction: Search[Page 1]",
    "Thought: e.\nAction: Lookup[topic2]",
    "Thought: f.\nAction: Serch[Page 2]",
    "Thought: g.\nAction: Search[Page 2]",
    "Thought: h.\nAction: Finish[topic2]",
]
STEPS = len(SCRIPT)


def plain_loop(model: ScriptedChatModel, wiki: MemorySource) -> list[Step]:
    """Do the same work as the graph, as a plain loop."""
    history: list[Step] = []
    sentences: list[str] = []
    cursors: dict[str, int] = {}
    for _ in range(STEPS):
        reply = model.invoke(build_messages("q", history), stop=STOP_SEQUENCES)
        raw = cut_at_observation(reply.text)
        parsed = parse_output(raw)
        action = parsed.result
        observation = ""
        if isinstance(action, Action) and action.name == "Search":
            found = search(wiki, action.argument)
            sentences, cursors, observation = found.sentences, {}, found.observation
        elif isinstance(action, Action) and action.name == "Lookup":
            looked = lookup(sentences, cursors, action.argument)
            cursors, observation = looked.cursors, looked.observation
        elif not isinstance(action, Action):
            observation = "Invalid action: " + action.message
        observation = truncate(sanitize_observation(observation), 1000)
        history.append(
            Step(
                kind="executed",
                thought=parsed.thought,
                action=str(action),
                observation=observation,
                raw=raw,
            )
        )
        if isinstance(action, Action) and action.name == "Finish":
            break
    return history


def per_step_ms(run: Callable[[int], object], cpu: dict[str, float] | None = None) -> float:
    """Median wall milliseconds per step over REPEATS episodes; `cpu["ms"]`: mean CPU ms per step."""
    times = []
    cpu_start = time.process_time()
    for i in range(REPEATS):
        start = time.perf_counter()
        run(i)
        times.append((time.perf_counter() - start) * 1000 / STEPS)
    if cpu is not None:
        cpu["ms"] = (time.process_time() - cpu_start) * 1000 / REPEATS / STEPS
    return statistics.median(times)


def count_saver_cpu(saver: BaseCheckpointSaver, spent: list[float]) -> None:
    """Add the CPU seconds of every `put`/`put_writes` of `saver` (any thread) to `spent[0]`."""
    for name in ("put", "put_writes"):
        method = getattr(saver, name)

        def timed(*args: object, _method: Callable[..., object] = method) -> object:
            start = time.thread_time()
            try:
                return _method(*args)
            finally:
                spent[0] += time.thread_time() - start

        setattr(saver, name, timed)


def run() -> dict[str, float]:
    """Measure the four variants."""
    wiki = MemorySource(PAGES)
    context = Context(max_steps=20)
    plain_cpu: dict[str, float] = {}
    figures = {
        "plain loop": per_step_ms(
            lambda i: plain_loop(ScriptedChatModel(outputs=SCRIPT), wiki), plain_cpu
        )
    }
    sync_cpu: dict[str, float] = {}
    saver_cpu = [0.0]
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "stock.db", check_same_thread=False)
        variants = {
            "graph, no checkpointer": (None, None),
            "graph, InMemorySaver": (InMemorySaver(), None),
            "graph, stock SqliteSaver": (SqliteSaver(conn), None),
            "graph, SqliteSaver (SqliteThreads)": (SqliteThreads(Path(tmp) / "a.db").saver, None),
            "graph, SqliteSaver (SqliteThreads), sync": (
                SqliteThreads(Path(tmp) / "s.db").saver,
                "sync",
            ),
        }
        for name, (saver, durability) in variants.items():
            graph = build_graph(saver, model=ScriptedChatModel(outputs=SCRIPT), wiki=wiki)

            def episode(i: int, graph=graph, durability=durability) -> object:  # type: ignore[no-untyped-def]
                out = graph.invoke(
                    {"question": "q"},
                    {"configurable": {"thread_id": f"t{i}"}},
                    context=context,
                    durability=durability,
                )
                assert out["steps"] == STEPS and out["answer"] == "topic2"
                return out

            episode(-1)  # warm up
            if durability == "sync":
                count_saver_cpu(saver, saver_cpu)
            figures[name] = per_step_ms(episode, sync_cpu if durability == "sync" else None)
    figures["cpu: plain loop"] = plain_cpu["ms"]
    figures["cpu: graph, SqliteSaver (SqliteThreads), sync"] = sync_cpu["ms"]
    figures["cpu: in the saver's put/put_writes"] = saver_cpu[0] * 1000 / REPEATS / STEPS
    return figures


def rows() -> list[Row]:
    """Return the figures as table rows."""
    f = run()
    base = f["plain loop"]
    out = [
        Row(f"step time, {name}", value, "ms", f"x{value / base:.1f} plain loop")
        for name, value in f.items()
        if not name.startswith("cpu: ")
    ]
    added = f["graph, SqliteSaver (SqliteThreads)"] - base
    out.append(
        Row(
            "step time added by graph + SqliteSaver",
            added,
            "ms",
            f"<= {TARGET_MS} ms",
            added <= TARGET_MS,
        )
    )
    added_sync = f["graph, SqliteSaver (SqliteThreads), sync"] - base
    out.append(
        Row(
            "  the same with durability=sync",
            added_sync,
            "ms",
            f"<= {TARGET_MS} ms (CLI/eval)",
            added_sync <= TARGET_MS,
        )
    )
    out += [
        Row(f"step CPU time, {name.removeprefix('cpu: ')}", value, "ms")
        for name, value in f.items()
        if name.startswith("cpu: ")
    ]
    return out


def main() -> int:
    """Print the figures."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
