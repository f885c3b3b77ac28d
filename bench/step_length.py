"""Step length: time and checkpoint bytes per step at 300, 1,200 and 4,800 steps.

An episode of N steps (an instant scripted model, in-memory pages: a new page every 4
steps, Lookups in between, no step repeating another) runs as the CLI runs it: the
`SqliteThreads` SQLite file, durability "sync", streaming updates and custom events. The
model fails at step N, so the thread is then resumed from a freshly opened file, as
`wikireact resume` does: one `get_state`, then the last step.

Per length: CPU time per step (all threads) of everything but the model call, and of it
the prompt building; the model call's CPU time per step; checkpoint bytes per step (the
file after a WAL checkpoint, minus the empty file); `get_state` on the freshly opened
file, the most writes it replays for one delta channel, and the resume. Targets: CPU time
and bytes per step at 1,200 and 4,800 steps within 1.5x of 300 steps; `get_state` of the
4,800-step thread under 0.5 s, replaying at most one snapshot interval of writes.

Checkpoint bytes per step on both stores (`store_rows`; `python bench/step_length.py
--stores [--4800]` prints only these): the same episode, finished, on a SQLite file and on
a throwaway PostgreSQL database (`postgres.used_bytes`: tables, TOAST, indexes), with the
pages of repeated sentences above (zlib 6.5x) and with `WORD_PAGES`, pseudo-random prose
that compresses as real prose does (2.2x a page, 3x over many). Targets: PostgreSQL at most
`TARGET_PG_VS_SQLITE` times SQLite's bytes per step, and within `TARGET_PG_FLAT` of its own
300-step figure at 1,200 (and 4,800) steps.

The model call is left out of the CPU target because it legitimately grows with the
episode: its prompt holds every earlier step, and LangChain goes over every message of a
prompt on each call (`_format_for_tracing`, `_normalize_messages`), as the scripted model
does to count tokens and as a real model does to read them. Building the prompt is
wikireact's own code and stays in: each step's messages are built once, and a prompt
extends the previous one (`wikireact.prompting.turns`); what is left grows with the
episode only as appending to lists never changed in place does (a new trajectory, usage and
audit list and proposals record a step, and the prompt; what is kept to recognise the next
prompt shares pieces with the previous step's: `wikireact.prompting.recent_lists.KeptList`),
with Python's young-generation collections going over those new lists, and counting the prompt's tokens for
the context window (the default model's 131,072 tokens, full from about step 4,650 of the longest
episode, which is then fitted every step: `wikireact.prompting.fitting`).
"""

from __future__ import annotations

import random
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from postgres import used_bytes
from table import Row, print_rows

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import ModelCallError, PgUnavailableError
from wikireact.models.scripted import ScriptOutput
from wikireact.prompting.variants import PROMPT_VARIANTS
from wikireact.state import FULL_VALUE_EVERY
from wikireact.storage.postgres.cluster import PgCluster
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.storage.threads import Threads, open_threads

LENGTHS = (300, 1_200, 4_800)
ROUNDS = 5
"""Rounds of one episode per length, the lengths in turn; per length the episode with the least
CPU time counts. The machine is shared: noise only adds time, and it comes and goes (the same
300-step episode took 3.8-7.4 ms a step in five rounds), so every length gets as many tries,
spread over the same minutes. With 3 rounds the 4,800-step ratio moved by 0.4x from run to run
(1.15x-1.57x) on unchanged code."""
TARGET_RATIO = 1.5
TARGET_GET_STATE_MS = 500
COLD_READS = 3
PAGES = {
    f"Page {i}": " ".join(f"Sentence {j} of page {i} is about topic{j % 9}." for j in range(30))
    for i in range(max(LENGTHS) // 4 + 1)
}
CONFIG: RunnableConfig = {"configurable": {"thread_id": "long"}}
STORE_LENGTHS = (300, 1_200)
TARGET_PG_VS_SQLITE = 2.0
TARGET_PG_FLAT = 1.2


def word_pages(count: int, seed: int = 35) -> dict[str, str]:
    """Return `count` pages of pseudo-random prose (seeded).

    30 sentences of 8-20 words each, drawn from 3,000 made-up words by Zipf's law, with one
    `topicN` keyword each (what the Lookups look for).
    """
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 10)))
        for _ in range(3_000)
    ]
    weights = [1 / rank for rank in range(1, len(vocabulary) + 1)]
    pages = {}
    for i in range(count):
        page = random.Random(seed * 100_000 + i)
        sentences = []
        for j in range(30):
            words = page.choices(vocabulary, weights, k=page.randint(8, 20))
            words.insert(page.randrange(len(words)), f"topic{j % 9}")
            sentences.append(" ".join(words).capitalize() + ".")
        pages[f"Page {i}"] = " ".join(sentences)
    return pages


WORD_PAGES = word_pages(len(PAGES))
TEXTS = {"repeated sentences": PAGES, "word text": WORD_PAGES}


def script(steps: int) -> list[ScriptOutput]:
    """Return `steps` outputs: a new page every 4 steps, other Lookups between, Finish last."""
    out: list[ScriptOutput] = [
        f"Thought: step {k}.\nAction: Search[Page {k // 4}]"
        if k % 4 == 0
        else f"Thought: step {k}.\nAction: Lookup[topic{k % 4}]"
        for k in range(steps - 1)
    ]
    return [*out, "Thought: done.\nAction: Finish[topic1]"]


class TimedModel(ScriptedChatModel):
    """The scripted model, adding the CPU time of every call (prompt handling included)."""

    cpu_s: float = 0.0

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Call the model, timing the calling thread."""
        start = time.thread_time()
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            self.cpu_s += time.thread_time() - start


class TimedPrompt:
    """The default prompt builder, adding the CPU time of every call."""

    def __init__(self) -> None:
        """Wrap the builder `wikireact.prompting.variants` holds for the default variant."""
        self.build: Any = PROMPT_VARIANTS["default"]
        self.cpu_s = 0.0

    def __call__(self, *args: Any) -> Any:
        """Build the prompt, timing the calling thread."""
        start = time.thread_time()
        try:
            return self.build(*args)
        finally:
            self.cpu_s += time.thread_time() - start


def file_bytes(db: Path) -> int:
    """Return the size of a closed checkpoint file (closing folds its WAL in) and any WAL left."""
    wal = Path(f"{db}-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def stream(graph: Any, payload: Any, steps: int) -> None:
    """Run the graph as `wikireact ask`/`resume` do (stream updates and custom events, sync)."""
    context = Context(max_steps=steps, repetition_limit=steps)
    for _ in graph.stream(
        payload, CONFIG, context=context, stream_mode=["updates", "custom"], durability="sync"
    ):
        pass


def measure(steps: int, db: Path) -> dict[str, float]:
    """Run, read and resume one `steps`-step thread in `db`; return its figures."""
    wiki = MemorySource(PAGES)
    SqliteThreads(db).close()
    empty = file_bytes(db)
    store = SqliteThreads(db)
    model = TimedModel(outputs=script(steps), errors={steps - 1: ConnectionError("down")})
    graph = build_graph(store.saver, model=model, wiki=wiki)
    prompt = PROMPT_VARIANTS["default"] = TimedPrompt()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        stream(graph, {"question": "q"}, steps)
    except ModelCallError:  # the thread is saved up to step `steps - 1`
        pass
    finally:
        PROMPT_VARIANTS["default"] = prompt.build
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    store.close()
    used = file_bytes(db) - empty
    reads, replayed = [], [0]
    for _ in range(COLD_READS):
        store = SqliteThreads(db)
        history = store.saver.get_delta_channel_history

        def counted(history: Any = history, **kwargs: Any) -> Any:
            found = history(**kwargs)
            replayed[0] = max(len(h["writes"]) for h in found.values())
            return found

        store.saver.get_delta_channel_history = counted  # type: ignore[method-assign]
        start = time.perf_counter()
        state = build_graph(store.saver, wiki=wiki).get_state(CONFIG)
        reads.append(time.perf_counter() - start)
        store.close()
        assert state.values["steps"] == steps - 1, state.values["steps"]
    store = SqliteThreads(db)
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=script(steps)), wiki=wiki)
    start = time.perf_counter()
    stream(graph, None, steps)
    resume = time.perf_counter() - start
    values = graph.get_state(CONFIG).values
    store.close()
    assert values["steps"] == steps and values["status"] == "finished", values["status"]
    return {
        "cpu_ms": (cpu - model.cpu_s) * 1000 / (steps - 1),
        "prompt_ms": prompt.cpu_s * 1000 / (steps - 1),
        "model_ms": model.cpu_s * 1000 / (steps - 1),
        "wall_ms": wall * 1000 / (steps - 1),
        "bytes": used / (steps - 1),
        "get_state_ms": statistics.median(reads) * 1000,
        "replayed": replayed[0],
        "resume_ms": resume * 1000,
    }


def rows() -> list[Row]:
    """Return the figures as table rows."""
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in LENGTHS}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(ROUNDS):
            for n in LENGTHS:
                runs[n].append(measure(n, Path(tmp) / f"{n}-{round_}.db"))
    found = {n: min(runs[n], key=lambda f: f["cpu_ms"]) for n in LENGTHS}
    base = found[LENGTHS[0]]
    out = []
    for n, f in found.items():
        out += [
            Row(f"CPU per step, model call excluded, {n:,} steps", f["cpu_ms"], "ms"),
            Row(f"  of which building the prompt, {n:,} steps", f["prompt_ms"], "ms"),
            Row(f"  CPU per step in the model call, {n:,} steps", f["model_ms"], "ms"),
            Row(f"  wall per step (shared machine), {n:,} steps", f["wall_ms"], "ms"),
            Row(f"checkpoint bytes per step, {n:,} steps", f["bytes"], "B"),
            Row(
                f"get_state of a {n:,}-step thread, fresh file",
                f["get_state_ms"],
                "ms",
                f"<= {TARGET_GET_STATE_MS} ms" if n == max(LENGTHS) else "",
                f["get_state_ms"] <= TARGET_GET_STATE_MS if n == max(LENGTHS) else None,
            ),
            Row(
                "  writes it replays, most of one channel",
                f["replayed"],
                "",
                f"<= {FULL_VALUE_EVERY} (snapshot)",
                f["replayed"] <= FULL_VALUE_EVERY,
            ),
            Row(f"  resume it to the end (1 step), {n:,} steps", f["resume_ms"], "ms"),
        ]
    for n in LENGTHS[1:]:
        for key, what in (("cpu_ms", "CPU per step"), ("bytes", "bytes per step")):
            ratio = found[n][key] / base[key]
            out.append(
                Row(
                    f"{what}, {n:,} vs {LENGTHS[0]:,} steps",
                    ratio,
                    "x",
                    f"<= {TARGET_RATIO} (flat)",
                    ratio <= TARGET_RATIO,
                )
            )
    return out


def bytes_per_step(store: Threads, steps: int, pages: dict[str, str] = PAGES) -> float:
    """Return the checkpoint bytes per step of one finished `steps`-step episode over `pages`."""
    before = used_bytes(store)
    graph = build_graph(
        store.saver, model=ScriptedChatModel(outputs=script(steps)), wiki=MemorySource(pages)
    )
    out = graph.invoke(
        {"question": "q"},
        {"configurable": {"thread_id": f"long{steps}"}},
        context=Context(max_steps=steps, repetition_limit=steps),
        durability="sync",
    )
    assert out["steps"] == steps and out["status"] == "finished", out["status"]
    return (used_bytes(store) - before) / steps


def store_rows(lengths: tuple[int, ...] = STORE_LENGTHS) -> list[Row]:
    """Return checkpoint bytes per step on both stores, by length and page text, as rows."""
    try:
        cluster: PgCluster | None = PgCluster.start()
    except PgUnavailableError as exc:
        print(f"PostgreSQL unavailable, SQLite only: {exc}", file=sys.stderr)
        cluster = None
    out: list[Row] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for text, pages in TEXTS.items():
                found: dict[tuple[str, int], float] = {}
                for name in ("SQLite", "PostgreSQL") if cluster else ("SQLite",):
                    for n in lengths:
                        target = (
                            cluster.create_database()
                            if cluster is not None and name == "PostgreSQL"
                            else str(Path(tmp) / f"{text}-{n}.db")
                        )
                        store = open_threads(target)
                        try:
                            found[name, n] = bytes_per_step(store, n, pages)
                        finally:
                            store.close()
                        out.append(
                            Row(f"{name}, {text}: bytes per step, {n:,} steps", found[name, n], "B")
                        )
                if cluster is None:
                    continue
                for n in lengths:
                    ratio = found["PostgreSQL", n] / found["SQLite", n]
                    out.append(
                        Row(
                            f"PostgreSQL vs SQLite, {text}, {n:,} steps",
                            ratio,
                            "x",
                            f"<= {TARGET_PG_VS_SQLITE}",
                            ratio <= TARGET_PG_VS_SQLITE,
                        )
                    )
                for n in lengths[1:]:
                    ratio = found["PostgreSQL", n] / found["PostgreSQL", lengths[0]]
                    out.append(
                        Row(
                            f"PostgreSQL, {text}, {n:,} vs {lengths[0]:,} steps",
                            ratio,
                            "x",
                            f"<= {TARGET_PG_FLAT} (flat)",
                            ratio <= TARGET_PG_FLAT,
                        )
                    )
    finally:
        if cluster is not None:
            cluster.stop()
    return out


def main(argv: list[str]) -> int:
    """Print the figures (`--stores`: only the stores' bytes; `--4800`: those at 4,800 steps too)."""
    lengths = STORE_LENGTHS + ((4_800,) if "--4800" in argv else ())
    return print_rows(([] if "--stores" in argv else rows()) + store_rows(lengths))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
