"""Pruning threads keeps what they read as: delta channels written whole first (both stores).

A 40-step episode passes its delta channels' snapshot interval twice, so its latest
checkpoint holds several channels as deltas (nothing stored) whose values a read rebuilds
from ancestors; the reads after `prune(keep_latest)` must equal the reads before.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from support import GOOD_RUN, MANY_PAGES, QUESTION, distinct_steps, thread

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.storage.materialise import COUNTERS, delta_channels
from wikireact.storage.threads import open_threads

STEPS = 40


def run(saver: BaseCheckpointSaver, thread_id: str, steps: int = STEPS, **kw: Any) -> Any:
    """Run `distinct_steps(steps)` on a thread; return the graph."""
    model = ScriptedChatModel(outputs=distinct_steps(steps))
    graph = build_graph(saver, model=model, wiki=MemorySource(MANY_PAGES))
    context = Context(max_steps=kw.get("max_steps", steps), repetition_limit=steps)
    graph.invoke({"question": QUESTION}, thread(thread_id), context=context)
    return graph


def reads(graph: Any, thread_id: str) -> tuple[Any, ...]:
    """What a reader sees of a thread's latest checkpoint."""
    state = graph.get_state(thread(thread_id))
    return (
        state.values,
        state.next,
        state.metadata,
        state.config,
        state.parent_config,
        state.created_at,
        state.tasks,
    )


@pytest.fixture
def store(db_target: str):  # type: ignore[no-untyped-def]
    threads = open_threads(db_target)
    yield threads
    threads.close()


def test_keep_latest_reads_back_identically_with_delta_channels(store: Any) -> None:
    graph = run(store.saver, "a")
    run(store.saver, "b", steps=6)
    latest = store.saver.get_tuple(thread("a"))
    deltas = sorted(
        k
        for k in latest.metadata[COUNTERS]
        if k in latest.checkpoint["channel_versions"]
        and k not in latest.checkpoint["channel_values"]
    )
    assert {"trajectory", "usage", "audit"} <= set(deltas)  # the kept checkpoint holds deltas
    before = reads(graph, "a")
    other = reads(graph, "b")
    assert len(list(store.saver.list(thread("a")))) > 100

    store.saver.prune(["a"], strategy="keep_latest", channels=delta_channels([graph]))

    assert [t.config for t in store.saver.list(thread("a"))] == [before[3]]
    assert reads(graph, "a") == before and before[0]["steps"] == STEPS
    assert [s.values for s in graph.get_state_history(thread("a"))] == [before[0]]
    assert reads(graph, "b") == other  # another thread untouched
    fresh = open_threads(store.location if "://" not in store.location else store.url)
    try:  # read from the database alone, without the saver's caches
        assert reads(build_graph(fresh.saver), "a") == before
    finally:
        fresh.close()


def test_without_the_graphs_channels_a_delta_thread_is_refused_unchanged(store: Any) -> None:
    run(store.saver, "a")
    before = list(store.saver.list(thread("a")))
    with pytest.raises(NotImplementedError, match="trajectory"):
        store.saver.prune(["a"], strategy="keep_latest")
    assert list(store.saver.list(thread("a"))) == before


def test_a_pruned_thread_resumes_as_an_unpruned_one(store: Any, wiki: MemorySource) -> None:
    """Out of budget at step 3, pruned, then continued with a larger budget: same answer."""
    for thread_id in ("pruned", "kept"):
        graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
        graph.invoke({"question": QUESTION}, thread(thread_id), context=Context(max_steps=2))
    graph = build_graph(store.saver, wiki=wiki)
    store.saver.prune(["pruned"], channels=delta_channels([graph]))
    outcomes = []
    for thread_id in ("pruned", "kept"):
        graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
        graph.update_state(thread(thread_id), {"status": "running"}, as_node="observe")
        out = graph.invoke(None, thread(thread_id), context=Context(max_steps=5))
        outcomes.append((out["answer"], [s["action"] for s in out["trajectory"]], out["steps"]))
    assert outcomes[0] == outcomes[1] and outcomes[0][0] == "yes"


def test_deleting_a_run_keeps_what_later_runs_read(store: Any, wiki: MemorySource) -> None:
    """The first run (out of budget) is deleted; the continuation's checkpoints read as before."""
    import uuid

    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    config: Any = {**thread("a"), "metadata": {"run_id": first}}
    graph.invoke({"question": QUESTION}, config, context=Context(max_steps=2))
    graph.update_state(thread("a"), {"status": "running"}, as_node="observe")
    graph.invoke(
        None, {**thread("a"), "metadata": {"run_id": second}}, context=Context(max_steps=5)
    )
    runs = [t.metadata.get("run_id") for t in store.saver.list(thread("a"))]
    assert first in runs and second in runs
    later = [
        s
        for s in graph.get_state_history(thread("a"))
        if (s.metadata or {}).get("run_id") == second
    ]
    before = [(s.values, s.next, s.config) for s in later]

    store.saver.delete_for_runs([first], channels=delta_channels([graph]))

    after = [(s.values, s.next, s.config) for s in graph.get_state_history(thread("a"))]
    assert first not in [t.metadata.get("run_id") for t in store.saver.list(thread("a"))]
    assert after[: len(before)] == before and before[0][0]["answer"] == "yes"
