"""Resume and history: time to read and continue long threads from the SQLite checkpoint file.

Threads of 8, 32 and 128 steps (pages of 500 sentences every 4 steps) stop when the model
fails before their last step. From a freshly opened checkpoint file we time `get_state`,
resuming to the end (one Finish step), and listing `get_state_history`.
Target: `get_state` under 20 ms at 128 steps.

History: the same 100-step episode saved by wikireact's saver and by the stock
`SqliteSaver`; we time `get_state_history` on both and the `wikireact history` command
(in-process, output captured), interleaved and repeated. Targets: the command takes at most
0.25x the stock `get_state_history`, and `get_state_history` on our saver is no slower.
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from checkpoint_growth import PAGES, script
from langgraph.checkpoint.sqlite import SqliteSaver
from table import Row, print_rows
from typer.testing import CliRunner

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.cli.app import app
from wikireact.storage.sqlite.threads import SqliteThreads

LENGTHS = (8, 32, 128)
TARGET_GET_STATE_MS = 20.0
REPEATS = 10
HISTORY_STEPS = 100
HISTORY_REPEATS = 7
TARGET_HISTORY_RATIO = 0.25
CONFIG = {"configurable": {"thread_id": "t"}}


def paused_thread(steps: int, db: Path) -> None:
    """Write a thread whose model fails at its last step."""
    store = SqliteThreads(db)
    model = ScriptedChatModel(outputs=script(steps), errors={steps - 1: ConnectionError("down")})
    graph = build_graph(store.saver, model=model, wiki=MemorySource(PAGES))
    try:
        graph.invoke(
            {"question": "q"},
            CONFIG,
            context=Context(max_steps=steps, repetition_limit=steps),
            durability="sync",
        )
    except Exception:
        pass
    store.close()


def cold_get_state_ms(db: Path, steps: int) -> float:
    """Return the milliseconds of one `get_state` on a freshly opened checkpoint file."""
    store = SqliteThreads(db)
    graph = build_graph(
        store.saver, model=ScriptedChatModel(outputs=script(steps)), wiki=MemorySource(PAGES)
    )
    start = time.perf_counter()
    graph.get_state(CONFIG)
    elapsed = (time.perf_counter() - start) * 1000
    store.close()
    return elapsed


def timed_ms(fn) -> float:  # type: ignore[no-untyped-def]
    """Return the median milliseconds of REPEATS calls of fn."""
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def history_rows(tmp: Path) -> list[Row]:
    """Time listing a 100-step thread: stock and our `get_state_history`, `wikireact history`."""
    ours_db, stock_db = tmp / "history.db", tmp / "history-stock.db"
    store = SqliteThreads(ours_db)
    store.register("t", "q", Context(max_steps=HISTORY_STEPS, repetition_limit=HISTORY_STEPS))
    stock = SqliteSaver(sqlite3.connect(stock_db, check_same_thread=False))
    graphs = [
        build_graph(
            saver, model=ScriptedChatModel(outputs=script(HISTORY_STEPS)), wiki=MemorySource(PAGES)
        )
        for saver in (store.saver, stock)
    ]
    for graph in graphs:
        out = graph.invoke(
            {"question": "q"},
            CONFIG,
            context=Context(max_steps=HISTORY_STEPS, repetition_limit=HISTORY_STEPS),
            durability="sync",
        )
        assert out["steps"] == HISTORY_STEPS
    checkpoints = len(list(graphs[1].get_state_history(CONFIG)))
    runner = CliRunner()

    def command() -> None:
        result = runner.invoke(app, ["history", "t", "--db", str(ours_db)])
        assert result.exit_code == 0 and result.stdout.count("superstep") == checkpoints, (
            result.output
        )

    timers = {
        "stock": lambda: list(graphs[1].get_state_history(CONFIG)),
        "ours": lambda: list(graphs[0].get_state_history(CONFIG)),
        "command": command,
    }
    samples: dict[str, list[float]] = {name: [] for name in timers}
    for _ in range(HISTORY_REPEATS):
        for name, fn in timers.items():
            start = time.perf_counter()
            fn()
            samples[name].append((time.perf_counter() - start) * 1000)
    store.close()
    ms = {name: statistics.median(values) for name, values in samples.items()}
    command_ratio, ours_ratio = ms["command"] / ms["stock"], ms["ours"] / ms["stock"]
    return [
        Row(
            f"get_state_history, stock saver, {HISTORY_STEPS} steps ({checkpoints} ckpts)",
            ms["stock"],
            "ms",
        ),
        Row(f"get_state_history, our saver, {HISTORY_STEPS} steps", ms["ours"], "ms"),
        Row("  our / stock get_state_history", ours_ratio, "x", "<= 1.0", ours_ratio <= 1.0),
        Row(f"`wikireact history`, {HISTORY_STEPS}-step thread", ms["command"], "ms"),
        Row(
            "  `history` / stock get_state_history",
            command_ratio,
            "x",
            f"<= {TARGET_HISTORY_RATIO}",
            command_ratio <= TARGET_HISTORY_RATIO,
        ),
    ]


def rows() -> list[Row]:
    """Return the figures as table rows."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for steps in LENGTHS:
            db = Path(tmp) / f"r{steps}.db"
            paused_thread(steps, db)
            store = SqliteThreads(db)
            graph = build_graph(
                store.saver,
                model=ScriptedChatModel(outputs=script(steps)),
                wiki=MemorySource(PAGES),
            )
            state = graph.get_state(CONFIG)
            assert state.values["steps"] == steps - 1 and len(state.values["page_sentences"]) == 500
            get_ms = statistics.median(cold_get_state_ms(db, steps) for _ in range(REPEATS))
            history_ms = timed_ms(lambda graph=graph: list(graph.get_state_history(CONFIG)))
            checkpoints = len(list(graph.get_state_history(CONFIG)))
            start = time.perf_counter()
            final = graph.invoke(
                None,
                CONFIG,
                context=Context(max_steps=steps, repetition_limit=steps),
                durability="sync",
            )
            resume_ms = (time.perf_counter() - start) * 1000
            assert final["steps"] == steps and final["status"] == "finished"
            store.close()
            out.append(
                Row(
                    f"get_state, {steps}-step thread",
                    get_ms,
                    "ms",
                    f"< {TARGET_GET_STATE_MS} ms" if steps == 128 else "",
                    get_ms < TARGET_GET_STATE_MS if steps == 128 else None,
                )
            )
            out.append(Row(f"resume to end, {steps}-step thread", resume_ms, "ms"))
            out.append(
                Row(
                    f"get_state_history ({checkpoints} checkpoints), {steps} steps",
                    history_ms,
                    "ms",
                )
            )
        out += history_rows(Path(tmp))
    return out


def main() -> int:
    """Print the figures."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
