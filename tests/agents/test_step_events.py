"""Every agent streams the same step event at the top level, one per step, so one progress view serves all.

With `stream_mode=["updates", "custom"]` (what the CLI's live view reads), each step of the
episode arrives as one `custom` event `{"step", "kind", "thought", "action", "observation",
"raw", "status"}`, numbered in the whole episode (1, 2, ... as the output's `steps`), for
ReAct and ReWOO, whose steps are their own, and for Plan-and-Execute and Reflexion, whose
steps are taken in nested ReAct episodes (tagged with their `subgoal` or `trial`). With
`subgraphs=True` the nested episodes' own events come as well, under their namespaces.
Through `graph.stream`, for every agent.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from reflexion_scripts import LESSON, RIGHT_RUN, WRONG_GUESS
from support import QUESTION, thread
from test_agent_settings import OWN_FIELDS, graph_of

from wikireact.agents import AGENTS

STEP_KEYS = {"step", "kind", "thought", "action", "observation", "raw", "status"}
TAGS = {"plan-execute": "subgoal", "reflexion": "trial"}


def run(agent: str, **kwargs: Any) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
    graph = graph_of(agent)
    inputs = {"question": QUESTION, **OWN_FIELDS[agent]}
    chunks = list(graph.stream(inputs, thread(), stream_mode=["updates", "custom"], **kwargs))
    return chunks, dict(graph.get_state(thread()).values)


@pytest.mark.parametrize("agent", list(AGENTS))
def test_one_step_event_per_step_at_the_top_level(agent: str) -> None:
    chunks, values = run(agent)
    events = [chunk for mode, chunk in chunks if mode == "custom"]
    assert values["steps"] > 1
    assert [e["step"] for e in events] == list(range(1, values["steps"] + 1))
    assert all(STEP_KEYS <= set(e) for e in events)
    assert [e["action"] for e in events] == [s["action"] for s in values["trajectory"]]
    if agent in TAGS:  # which sub-goal or trial took the step
        assert [e[TAGS[agent]] for e in events] == [s[TAGS[agent]] for s in values["trajectory"]]


@pytest.mark.parametrize("agent", list(AGENTS))
def test_with_subgraphs_the_top_level_events_are_the_same(agent: str) -> None:
    chunks, values = run(agent, subgraphs=True)
    top = [chunk for namespace, mode, chunk in chunks if mode == "custom" and not namespace]
    assert [e["step"] for e in top] == list(range(1, values["steps"] + 1))


def test_reflexion_numbers_steps_across_trials() -> None:
    graph = graph_of("reflexion", [WRONG_GUESS, LESSON, *RIGHT_RUN])
    inputs = {"question": QUESTION, "max_trials": 2, "gold_answer": "yes"}
    events = [c for m, c in graph.stream(inputs, thread(), stream_mode=["custom"]) if m == "custom"]
    assert [(e["step"], e["trial"]) for e in events] == [(1, 1), (2, 2), (3, 2), (4, 2)]


@pytest.mark.parametrize("agent", list(TAGS))
def test_astream_gives_the_same_top_level_events(agent: str) -> None:
    graph = graph_of(agent)
    inputs = {"question": QUESTION, **OWN_FIELDS[agent]}

    async def collect() -> list[Any]:
        stream = graph.astream(inputs, thread(), stream_mode=["updates", "custom"])
        return [chunk async for mode, chunk in stream if mode == "custom"]

    events = asyncio.run(collect())
    steps = graph.get_state(thread()).values["steps"]
    assert [e["step"] for e in events] == list(range(1, steps + 1))
