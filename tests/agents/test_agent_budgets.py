"""Budgets of a nested agent: Plan-and-Execute counts its planner calls and its sub-goals' steps together."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pe_scripts import WHOLE_RUN
from support import PAGES, QUESTION, REWOO_LLM_RUN, SpyModel

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


def test_rewoo_solver_clears_the_oldest_evidence_to_fit_the_window() -> None:
    from support import PAGES, SpyModel

    from wikireact.agents.rewoo.graph import build_graph as rewoo_graph

    plan = (
        "Plan: Derrickson.\n#E1 = Search[Scott Derrickson]\n"
        "Plan: Wood.\n#E2 = Search[Ed Wood]\nPlan: born.\n#E3 = Lookup[born]"
    )
    model = SpyModel(outputs=[plan, "Thought: both American.\nFinish[yes]"])
    graph = rewoo_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    config: Any = {"configurable": {"thread_id": "rw"}}
    whole = graph.invoke({"question": QUESTION}, config, context=Context())
    assert whole["answer"] == "yes"
    needed = model.count_prompt_tokens(model.calls[-1])
    model = SpyModel(outputs=[plan, "Thought: both American.\nFinish[yes]"], max_tokens=10)
    graph = rewoo_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    out = graph.invoke(
        {"question": QUESTION}, config, context=Context(context_tokens=needed, keep_observations=1)
    )
    solver_prompt = "\n".join(str(m.content) for m in model.calls[-1])
    assert out["answer"] == "yes" and model.count_prompt_tokens(model.calls[-1]) <= needed - 10
    assert "[cleared to fit the context: Search[Scott Derrickson], 5 sentences" in solver_prompt
    assert out["evidence"]["#E1"].startswith("Scott Derrickson (born")  # the state keeps it whole


def _reflexion(**budget: int) -> tuple[SpyModel, dict[str, Any]]:
    from reflexion_scripts import LESSON, RIGHT_RUN, WRONG_GUESS

    from wikireact.agents.reflexion.graph import build_graph as reflexion_graph

    model = SpyModel(outputs=[WRONG_GUESS, LESSON, *RIGHT_RUN])
    graph = reflexion_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    config: Any = {"configurable": {"thread_id": "rf"}}
    inputs = {"question": QUESTION, "gold_answer": "yes", "memory": "off"}
    out = graph.invoke(inputs, config, context=Context(**budget))  # type: ignore[arg-type]
    return model, {**graph.get_state(config).values, **out}


@pytest.mark.parametrize(
    ("setting", "calls"),
    [
        ("max_model_calls", 2),  # trial 1's step and its reflection; no trial 2
        ("max_input_tokens", 3),  # reached at trial 2's first step; no reflection after it
        ("max_output_tokens", 3),
    ],
)
def test_reflexion_budgets_count_every_trial_and_reflection(setting: str, calls: int) -> None:
    reference, whole = _reflexion()
    assert whole["answer"] == "yes" and whole["model_calls"] == 5
    used = {
        "max_model_calls": 2,
        "max_input_tokens": sum(u["input_tokens"] for u in whole["usage"][:2]) + 1,
        "max_output_tokens": sum(u["output_tokens"] for u in whole["usage"][:2]) + 1,
    }
    model, values = _reflexion(**{setting: used[setting]})
    assert values["status"] == "budget_exhausted" and values["answer"] != "yes"
    assert values["model_calls"] == calls == len(model.calls) == len(values["usage"])
    assert setting in values["stop_reason"]


def _rewoo(
    model: SpyModel, config: Any, graph: Any = None, **budget: int
) -> tuple[Any, dict[str, Any]]:
    from wikireact.agents.rewoo.graph import build_graph as rewoo_graph

    graph = graph or rewoo_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    inputs = None if graph.get_state(config).values else {"question": QUESTION}
    out = graph.invoke(inputs, config, context=Context(**budget))  # type: ignore[arg-type]
    return graph, {**graph.get_state(config).values, **out}


@pytest.mark.parametrize(
    ("setting", "calls"),
    [
        ("max_model_calls", 2),  # the plan and one of the round's two LLM steps: never past it
        ("max_input_tokens", 3),  # reached by the round's LLM steps; no solver after them
        ("max_output_tokens", 3),
    ],
)
def test_rewoo_stops_at_a_budget_counting_planner_llm_steps_and_solver(
    setting: str, calls: int
) -> None:
    config: Any = {"configurable": {"thread_id": "rw"}}
    reference = SpyModel(outputs=REWOO_LLM_RUN)
    _, whole = _rewoo(reference, config)
    assert whole["answer"] == "yes" and whole["model_calls"] == 4 == len(reference.calls)
    plan_usage = whole["usage"][0]
    limit = {
        "max_model_calls": 2,
        "max_input_tokens": plan_usage["input_tokens"] + 1,
        "max_output_tokens": plan_usage["output_tokens"] + 1,
    }[setting]
    model = SpyModel(outputs=REWOO_LLM_RUN)
    graph, values = _rewoo(model, config, **{setting: limit})
    assert values["status"] == "budget_exhausted" and values["answer"] is None
    assert values["model_calls"] == calls == len(model.calls)
    assert setting in values["stop_reason"]
    _, resumed = _rewoo(model, config, graph, **{setting: 0})  # the budget lifted: it goes on
    assert resumed["status"] == "finished" and resumed["answer"] == "yes"
    assert resumed["stop_reason"] is None
    assert resumed["model_calls"] == 4 == len(model.calls)  # no call made twice


def test_rewoo_stopped_by_a_budget_at_its_step_limit_continues_when_the_budget_is_raised() -> None:
    """ReWOO's step limit bounds its plan, written already: the budget that stopped it decides."""
    config: Any = {"configurable": {"thread_id": "rw"}}
    model = SpyModel(outputs=REWOO_LLM_RUN)
    graph, values = _rewoo(model, config, max_steps=4, max_model_calls=2)
    assert values["status"] == "budget_exhausted" and values["steps"] == 4  # plan + 3 steps
    assert "max_model_calls" in values["stop_reason"]
    _, resumed = _rewoo(model, config, graph, max_steps=4, max_model_calls=4)
    assert resumed["status"] == "finished" and resumed["answer"] == "yes"
    assert resumed["model_calls"] == 4 == len(model.calls)  # no second plan, no LLM step again
    kinds = [step["kind"] for step in resumed["trajectory"]]
    assert kinds == ["plan", "executed", "executed", "executed", "executed", "finish"]
    assert sorted(resumed["recorded"]) == [1, 2, 3, 4]
