"""LangGraph's recursion limit: the episode stops before it, says why, and resumes with a larger one."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from support import MANY_PAGES, QUESTION, distinct_steps, thread
from typing_extensions import TypedDict

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import ConfigurationError
from wikireact.graph import MIN_RECURSION_LIMIT, run_to_end
from wikireact.models.scripted import ScriptOutput

LOOKUPS: list[ScriptOutput] = [
    "Thought: look.\nAction: Search[Ed Wood]",
    *[f"Thought: more.\nAction: Lookup[word{i}]" for i in range(30)],
]
"""Every step executes an action: 4 supersteps each (reason, parse, act, observe)."""


@pytest.mark.parametrize(
    ("limit", "budget", "steps", "status"),
    [
        (25, 7, 6, "recursion_limit"),  # 1 + 6 x 4 supersteps fit in 25; a 7th step might not
        (25, 20, 6, "recursion_limit"),
        (100, 7, 7, "budget_exhausted"),
        (100, 20, 20, "budget_exhausted"),
    ],
)
def test_the_episode_stops_before_the_recursion_limit(
    limit: int, budget: int, steps: int, status: str, wiki: MemorySource
) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=LOOKUPS), wiki=wiki)
    out = graph.invoke(
        {"question": QUESTION},
        {**thread(), "recursion_limit": limit},
        context={"max_steps": budget},
    )
    assert (out["status"], out["steps"]) == (status, steps)


def test_a_stopped_episode_resumes_with_a_larger_limit(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    graph = build_graph(checkpointer, model=ScriptedChatModel(outputs=LOOKUPS), wiki=wiki)
    cfg: RunnableConfig = {**thread(), "recursion_limit": 25}
    graph.invoke({"question": QUESTION}, cfg, context={"max_steps": 20})
    again = graph.invoke(None, cfg)  # the same limit: six more steps
    assert (again["status"], again["steps"]) == ("recursion_limit", 12)
    done = graph.invoke(None, {**thread(), "recursion_limit": 100})
    assert (done["status"], done["steps"]) == ("budget_exhausted", 20)
    actions = [s["action"] for s in done["trajectory"]]
    assert actions == ["Search[Ed Wood]", *[f"Lookup[word{i}]" for i in range(19)]]  # all once
    assert run_to_end(graph, QUESTION, thread())["steps"] == 20


LONG_RUN = distinct_steps(40)
"""A 40-step episode that finishes (Finish[topic1]); no step repeats another."""


def outcome(out: dict[str, Any]) -> tuple[Any, ...]:
    """What an episode did and ended with (its audit records hold times)."""
    return (out["status"], out["answer"], out["steps"], out["trajectory"], out["usage"])


def long_run(limit: int, checkpointer: BaseCheckpointSaver | None = None) -> tuple[Any, Any]:
    """Run LONG_RUN on a new thread with `limit`; return the graph and the first run's output."""
    model = ScriptedChatModel(outputs=LONG_RUN)
    graph = build_graph(checkpointer or InMemorySaver(), model=model, wiki=MemorySource(MANY_PAGES))
    cfg: RunnableConfig = {**thread(), "recursion_limit": limit}
    return graph, graph.invoke({"question": QUESTION}, cfg, context={"max_steps": 50})


def test_every_limit_stops_resumably_and_resumes_to_the_same_answer() -> None:
    """Limits that are multiples of 4 (8, 12, ...) raised GraphRecursionError: the last
    step's `observe` ran at RemainingSteps 0 and LangGraph checks the limit before it looks
    for the next task."""
    _, uncut = long_run(1_000)
    assert (uncut["status"], uncut["steps"], uncut["answer"]) == ("finished", 40, "topic1")
    for limit in range(MIN_RECURSION_LIMIT, 31):
        graph, out = long_run(limit)
        assert (out["status"], out["steps"]) == ("recursion_limit", (limit - 1) // 4), limit
        done = graph.invoke(None, {**thread(), "recursion_limit": 1_000})
        assert outcome(done) == outcome(uncut), limit


def test_the_readmes_limit_of_100_stops_a_long_episode_and_resumes_it(
    checkpointer: BaseCheckpointSaver,
) -> None:
    graph, out = long_run(100, checkpointer)
    assert (out["status"], out["steps"]) == ("recursion_limit", 24)
    again = graph.invoke(None, {**thread(), "recursion_limit": 100})
    assert (again["status"], again["steps"]) == ("finished", 40)
    assert [s["raw"] for s in again["trajectory"]] == LONG_RUN


def test_the_door_refuses_a_limit_below_one_step_and_names_the_least() -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=LOOKUPS))
    with pytest.raises(ConfigurationError) as refused:
        graph.invoke({"question": QUESTION}, {**thread(), "recursion_limit": 4})
    assert str(refused.value) == (
        "recursion_limit 4 leaves no room for one ReAct step: use at least 5"
    )
    assert graph.get_state(thread()).values == {}  # nothing ran


class Outer(TypedDict):
    question: str
    status: str


def test_a_parent_recursion_limit_reaches_the_agent(wiki: MemorySource) -> None:
    agent = build_graph(model=ScriptedChatModel(outputs=LOOKUPS), wiki=wiki)

    def ask(state: Outer) -> dict[str, Any]:
        return {"status": agent.invoke({"question": state["question"]})["status"]}

    builder = StateGraph(Outer)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    parent = builder.compile()
    out = parent.invoke({"question": QUESTION, "status": ""}, {"recursion_limit": 25})
    assert out["status"] == "recursion_limit"


def test_run_to_end_continues_an_episode_stopped_by_the_limit(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=LOOKUPS), wiki=wiki)
    cfg: RunnableConfig = {**thread(), "recursion_limit": 25}
    assert run_to_end(graph, QUESTION, cfg)["status"] == "recursion_limit"
    out = run_to_end(graph, QUESTION, {**thread(), "recursion_limit": 200})
    assert (out["status"], out["steps"]) == ("budget_exhausted", 7)
