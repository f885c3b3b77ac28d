"""Long episodes: reading, resuming and storing a thread costs the same per step at any length."""

from __future__ import annotations

from pathlib import Path

from langchain_core.runnables import RunnableConfig

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.scripted import ScriptOutput
from wikireact.threads import ThreadStore

PAGES = {
    f"Page {i}": " ".join(f"Sentence {j} of page {i} is about topic{j % 9}." for j in range(30))
    for i in range(120)
}
WIKI = MemorySource(PAGES)
CONFIG: RunnableConfig = {"configurable": {"thread_id": "long"}}


def script(steps: int) -> list[ScriptOutput]:
    """A new page every 4 steps, Lookups in between, Finish last: no step repeats another."""
    out: list[ScriptOutput] = [
        f"Thought: step {k}.\nAction: Search[Page {k // 4}]"
        if k % 4 == 0
        else f"Thought: step {k}.\nAction: Lookup[topic{k % 4}]"
        for k in range(steps - 1)
    ]
    return [*out, "Thought: done.\nAction: Finish[topic1]"]


def write_thread(db: Path, steps: int) -> None:
    """Run a `steps`-step episode to its end into `db`, as the CLI saves it."""
    store = ThreadStore(db)
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=script(steps)), wiki=WIKI)
    out = graph.invoke(
        {"question": "q"},
        CONFIG,
        context=Context(max_steps=steps, repetition_limit=steps),
        durability="sync",
    )
    assert out["steps"] == steps and out["status"] == "finished"
    store.close()


def cold_read_work(db: Path) -> int:
    """SQLite VM instructions (in hundreds) of one `get_state` from a freshly opened file."""
    store = ThreadStore(db)
    work = [0]

    def count() -> int:
        work[0] += 1
        return 0

    store.conn.set_progress_handler(count, 100)
    state = build_graph(store.saver, wiki=WIKI).get_state(CONFIG)
    store.conn.set_progress_handler(None, 0)
    store.close()
    assert state.values["status"] == "finished"
    return work[0]


def test_a_cold_read_of_a_long_thread_does_not_walk_its_whole_history(tmp_path: Path) -> None:
    """Reading the latest state walks back to the nearest snapshots only, not to the first step."""
    write_thread(tmp_path / "short.db", 100)
    write_thread(tmp_path / "long.db", 400)
    short, long = cold_read_work(tmp_path / "short.db"), cold_read_work(tmp_path / "long.db")
    assert long < 1.5 * short, (short, long)
