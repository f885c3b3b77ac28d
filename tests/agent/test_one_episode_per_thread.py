"""One thread holds one episode: a new question is refused, concurrent runs on it are refused."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from support import GOOD_RUN, QUESTION, SpyModel, thread
from typing_extensions import TypedDict

from wikireact import Context, MemorySource, build_graph
from wikireact.errors import ConfigurationError, ThreadBusyError
from wikireact.graph import run_to_end

OTHER = "Who painted the Mona Lisa?"


def test_a_new_question_on_a_finished_thread_is_refused(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    model = SpyModel(outputs=GOOD_RUN)
    graph = build_graph(checkpointer, model=model, wiki=wiki)
    first = graph.invoke({"question": QUESTION}, thread())
    with pytest.raises(ConfigurationError, match="holds the episode of another question"):
        graph.invoke({"question": OTHER}, thread())
    with pytest.raises(ConfigurationError, match="holds the episode of another question"):
        run_to_end(graph, OTHER, thread())
    state = graph.get_state(thread())
    assert state.values["question"] == QUESTION
    assert state.values["trajectory"] == first["trajectory"]
    assert len(model.calls) == 4  # nothing ran for the refused questions


def test_a_new_question_on_a_paused_thread_leaves_the_pause_intact(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=SpyModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread(), context=Context(approve=True))
    with pytest.raises(ConfigurationError, match="thread 't1'"):
        graph.invoke({"question": OTHER}, thread(), context=Context(approve=True))
    paused = graph.get_state(thread())
    assert paused.next == ("act",) and paused.values["question"] == QUESTION


def test_the_same_question_again_continues_or_returns_the_episode(wiki: MemorySource) -> None:
    model = SpyModel(outputs=GOOD_RUN)
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    paused = graph.invoke({"question": QUESTION}, thread(), context={"approve": True})
    assert paused["__interrupt__"]
    again = graph.invoke({"question": QUESTION}, thread())  # continues: still at the same pause
    assert again["__interrupt__"][0].value["proposed_action"] == "Search[Scott Derrickson]"
    assert len(model.calls) == 1  # the step in progress was not asked again
    done = build_graph(InMemorySaver(), model=SpyModel(outputs=GOOD_RUN), wiki=wiki)
    out = done.invoke({"question": QUESTION}, thread())
    assert done.invoke({"question": QUESTION}, thread())["trajectory"] == out["trajectory"]
    assert run_to_end(done, QUESTION, thread())["answer"] == "yes"


def test_batch_with_one_shared_config_runs_one_episode(wiki: MemorySource) -> None:
    model = SpyModel(outputs=GOOD_RUN, delay_s=0.05)
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    outs = graph.batch(
        [{"question": QUESTION}, {"question": OTHER}], thread(), return_exceptions=True
    )
    refused = [o for o in outs if isinstance(o, Exception)]
    assert len(refused) == 1 and isinstance(refused[0], ThreadBusyError)
    assert "is already running" in str(refused[0])
    values = graph.get_state(thread()).values
    answered = next(o for o in outs if isinstance(o, dict))
    assert values["trajectory"] == answered["trajectory"] and len(values["trajectory"]) == 4
    assert len(model.calls) == 4  # one episode's calls, not two interleaved


def test_concurrent_async_runs_on_one_thread_are_refused(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=SpyModel(outputs=GOOD_RUN, delay_s=0.05), wiki=wiki)

    async def both() -> list[object]:
        runs = [graph.ainvoke({"question": QUESTION}, thread()) for _ in range(2)]
        return list(await asyncio.gather(*runs, return_exceptions=True))

    outs = asyncio.run(both())
    assert sum(isinstance(o, ThreadBusyError) for o in outs) == 1
    assert [o["answer"] for o in outs if isinstance(o, dict)] == ["yes"]


class Pair(TypedDict):
    questions: list[str]
    answers: list[Any]


def test_two_agent_runs_in_one_parent_task_are_two_episodes(wiki: MemorySource) -> None:
    """LangGraph gives each call of a subgraph in one task its own namespace: no refusal."""
    agent = build_graph(model=SpyModel(outputs=GOOD_RUN, delay_s=0.05), wiki=wiki)

    async def both(state: Pair) -> dict[str, Any]:
        outs = await asyncio.gather(*(agent.ainvoke({"question": q}) for q in state["questions"]))
        return {"answers": [(o["answer"], o["trajectory"][0]["action"]) for o in outs]}

    builder = StateGraph(Pair)
    builder.add_node("both", both)
    builder.add_edge(START, "both")
    parent = builder.compile(checkpointer=InMemorySaver())
    out = asyncio.run(parent.ainvoke({"questions": [QUESTION, OTHER], "answers": []}, thread()))
    assert out["answers"] == [("yes", "Search[Scott Derrickson]")] * 2
