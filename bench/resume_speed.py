"""Resume and history: time to read and continue long threads from the SQLite checkpoint file.

Threads of 8, 32 and 128 steps (pages of 500 sentences every 4 steps) stop when the model
fails before their last step. From a freshly opened checkpoint file we time `get_state`,
resuming to the end (one Finish step), and listing `get_state_history`.
Target: `get_state` under 20 ms at 128 steps.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from checkpoint_growth import PAGES, script
from table import Row, print_rows

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.threads import ThreadStore

LENGTHS = (8, 32, 128)
TARGET_GET_STATE_MS = 20.0
REPEATS = 10
CONFIG = {"configurable": {"thread_id": "t"}}


def paused_thread(steps: int, db: Path) -> None:
    """Write a thread whose model fails at its last step."""
    store = ThreadStore(db)
    model = ScriptedChatModel(outputs=script(steps), errors={steps - 1: ConnectionError("down")})
    graph = build_graph(store.saver, model=model, wiki=MemorySource(PAGES))
    try:
        graph.invoke({"question": "q"}, CONFIG, context=Context(max_steps=steps, repetition_limit=steps),
                     durability="sync")
    except Exception:
        pass
    store.close()


def timed_ms(fn) -> float:  # type: ignore[no-untyped-def]
    """Return the median milliseconds of REPEATS calls of fn on a freshly opened file."""
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def rows() -> list[Row]:
    """Return the figures as table rows."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for steps in LENGTHS:
            db = Path(tmp) / f"r{steps}.db"
            paused_thread(steps, db)
            store = ThreadStore(db)
            graph = build_graph(store.saver, model=ScriptedChatModel(outputs=script(steps)), wiki=MemorySource(PAGES))
            state = graph.get_state(CONFIG)
            assert state.values["steps"] == steps - 1 and len(state.values["page_sentences"]) == 500
            get_ms = timed_ms(lambda graph=graph: graph.get_state(CONFIG))
            history_ms = timed_ms(lambda graph=graph: list(graph.get_state_history(CONFIG)))
            checkpoints = len(list(graph.get_state_history(CONFIG)))
            start = time.perf_counter()
            final = graph.invoke(None, CONFIG, context=Context(max_steps=steps, repetition_limit=steps),
                                 durability="sync")
            resume_ms = (time.perf_counter() - start) * 1000
            assert final["steps"] == steps and final["status"] == "finished"
            store.close()
            out.append(Row(f"get_state, {steps}-step thread", get_ms, "ms",
                           f"< {TARGET_GET_STATE_MS} ms" if steps == 128 else "",
                           get_ms < TARGET_GET_STATE_MS if steps == 128 else None))
            out.append(Row(f"resume to end, {steps}-step thread", resume_ms, "ms"))
            out.append(Row(f"get_state_history ({checkpoints} checkpoints), {steps} steps", history_ms, "ms"))
    return out


def main() -> int:
    """Print the figures."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
