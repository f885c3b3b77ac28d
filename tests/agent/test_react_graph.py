"""`build_graph`'s `invoke` saves on one thread; streaming runs keep LangGraph's thread pool."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from langgraph.graph import StateGraph
from support import GOOD_RUN, PAGES, QUESTION, thread

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.episode.compiled import EpisodeGraph
from wikireact.storage.sqlite.threads import SqliteThreads


def saving_threads(store: SqliteThreads) -> set[int]:
    """Record the threads that run the saver's `put` and `put_writes` from now on."""
    seen: set[int] = set()
    saver: Any = store.saver
    for name in ("put", "put_writes"):
        method = getattr(saver, name)

        def recorded(*args: Any, _method: Any = method) -> Any:
            seen.add(threading.get_ident())
            return _method(*args)

        setattr(saver, name, recorded)
    return seen


def test_invoke_saves_every_checkpoint_on_one_thread(tmp_path: Path) -> None:
    store = SqliteThreads(tmp_path / "t.db")
    try:
        graph = build_graph(
            store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=MemorySource(PAGES)
        )
        assert isinstance(graph, EpisodeGraph)
        seen = saving_threads(store)
        out = graph.invoke({"question": QUESTION}, thread("a"), durability="sync")
        assert out["answer"] == "yes" and out["steps"] == 4
        assert len(seen) == 1
        # a checkpoint per superstep: the input, __start__, 3 x 4 nodes, reason/parse/observe
        assert len(list(graph.get_state_history(thread("a")))) == 17
    finally:
        store.close()


def test_invoke_streaming_custom_events_keeps_the_pool_and_ends(tmp_path: Path) -> None:
    """Custom events park a waiter on the pool: one thread would never run the node."""
    store = SqliteThreads(tmp_path / "t.db")
    try:
        graph = build_graph(
            store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=MemorySource(PAGES)
        )
        events: list[Any] = []
        running = threading.Thread(  # a daemon: a deadlocked run must not hang the tests
            target=lambda: events.extend(
                graph.invoke(
                    {"question": QUESTION},
                    thread("b"),
                    stream_mode=["values", "custom"],
                    durability="sync",
                )
            ),
            daemon=True,
        )
        running.start()
        running.join(timeout=60)
        assert not running.is_alive(), "the streaming run deadlocked"
        assert [chunk["step"] for mode, chunk in events if mode == "custom"] == [1, 2, 3, 4]
    finally:
        store.close()


def test_a_compiled_graph_becomes_an_episode_graph_by_construction_not_by_a_class_swap() -> None:
    """`as_episode_graph` builds a new graph from the parts; the given one keeps its class."""
    from langgraph.graph.state import CompiledStateGraph

    from wikireact.episode.compiled import EpisodeGraph, as_episode_graph
    from wikireact.graph import make_builder

    plain = StateGraph.compile(make_builder())  # LangGraph's own compile, not the subclass's
    graph = as_episode_graph(plain)
    assert type(plain) is CompiledStateGraph and type(graph) is EpisodeGraph
    assert graph is not plain and graph.nodes == plain.nodes
    assert type(graph.with_config(tags=["x"])) is EpisodeGraph  # LangGraph's copies keep it
