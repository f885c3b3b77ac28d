"""Budgets of a nested agent: Plan-and-Execute counts its planner calls and its sub-goals' steps together."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pe_scripts import WHOLE_RUN
from support import QUESTION

from wikireact import Context, MemorySource, ScriptedChatModel
from wikireact.agents.plan_execute.graph import build_graph


def _run(wiki: MemorySource, **budget: int) -> dict[str, Any]:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=WHOLE_RUN), wiki=wiki)
    config: Any = {"configurable": {"thread_id": "pe"}}
    graph.invoke({"question": QUESTION}, config, context=Context(**budget))  # type: ignore[arg-type]
    return dict(graph.get_state(config).values)


@pytest.mark.parametrize(
    ("setting", "limit", "calls"),
    [
        ("max_model_calls", 2, 2),  # the plan, then the first step of sub-goal 1
        ("max_model_calls", 4, 4),  # the plan, sub-goal 1's two steps, the replan
        ("max_input_tokens", 1200, 3),
        ("max_output_tokens", 20, 3),
    ],
)
def test_plan_and_execute_stops_at_a_budget_counting_its_sub_goals(
    wiki: MemorySource, setting: str, limit: int, calls: int
) -> None:
    values = _run(wiki, **{setting: limit})
    assert values["status"] == "budget_exhausted" and values["answer"] is None
    assert values["model_calls"] == calls == len(values["usage"])
    assert setting in values["stop_reason"]


def test_without_budgets_plan_and_execute_runs_as_before(wiki: MemorySource) -> None:
    values = _run(wiki)
    assert values["status"] == "finished" and values["model_calls"] == len(WHOLE_RUN)
