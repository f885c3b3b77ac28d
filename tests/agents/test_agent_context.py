"""Every agent's own prompts fit the model's window; one that cannot ends `context_exhausted`, resumably.

ReWOO's planner and LLM steps, Plan-and-Execute's planner and replanner, Reflexion's
reflection: whole episodes through the agents' graphs, asserting on what the model received.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from reflexion_scripts import LESSON, RIGHT_RUN
from support import PAGES, QUESTION, SpyModel, thread

from wikireact import Context, MemorySource
from wikireact.agents.plan_execute.graph import build_graph as pe_graph
from wikireact.agents.reflexion.graph import build_graph as reflexion_graph
from wikireact.agents.rewoo.graph import build_graph as rewoo_graph
from wikireact.models.scripted import ScriptOutput

REPLY = 10
"""Reply tokens the scripted models keep (`max_tokens`): a window leaves the prompt this less."""
OVERFLOW = "Requested tokens (9000) exceed context window of 8192"
"""llama.cpp's error for a prompt longer than its window."""
REWOO_PLAN = (
    "Plan: Derrickson.\n#E1 = Search[Scott Derrickson]\nPlan: Wood.\n#E2 = Search[Ed Wood]\n"
    "Plan: compare.\n#E3 = LLM[Compare the nationalities in #E1 and #E2]"
)
REWOO_RUN: list[ScriptOutput] = [REWOO_PLAN, "Both are American.", "Thought: same.\nFinish[yes]"]
"""Calls: 0 the plan, 1 the LLM step, 2 the solver."""
LONG_PAGES = {
    name: " ".join(
        f"{name} fact {i} is that {name} made film number {i} in a career." for i in range(9)
    )
    for name in ("Scott Derrickson", "Ed Wood")
}
"""Pages whose evidence makes an LLM step's prompt longer than the planner's."""


def _rewoo(
    model: SpyModel, context: Context | None = None, pages: dict[str, str] = PAGES
) -> tuple[Any, dict[str, Any]]:
    graph = rewoo_graph(InMemorySaver(), model=model, wiki=MemorySource(pages))
    out = graph.invoke({"question": QUESTION}, thread(), context=context or Context())
    return graph, {**graph.get_state(thread()).values, **out}


def _tokens(model: SpyModel) -> list[int]:
    return [model.count_prompt_tokens(messages) for messages in model.calls]


def test_rewoo_planner_shows_fewer_example_plans_to_fit_the_window() -> None:
    whole = SpyModel(outputs=REWOO_RUN, max_tokens=REPLY)
    _rewoo(whole)
    needed = _tokens(whole)[0]
    model = SpyModel(outputs=REWOO_RUN, max_tokens=REPLY)
    _, values = _rewoo(model, Context(context_tokens=needed + REPLY - 1))
    assert values["answer"] == "yes"
    assert max(_tokens(model)) <= needed - 1
    assert 1 <= model.prompts[0].count("Question:") < whole.prompts[0].count("Question:")
    assert model.texts[0][-1] == f"Question: {QUESTION}"


def test_rewoo_llm_step_clears_its_earliest_cited_evidence_to_fit() -> None:
    whole = SpyModel(outputs=REWOO_RUN, max_tokens=REPLY)
    _rewoo(whole, pages=LONG_PAGES)
    needed = _tokens(whole)[1]
    model = SpyModel(outputs=REWOO_RUN, max_tokens=REPLY)
    context = Context(context_tokens=needed + REPLY - 1, keep_observations=1)
    _, values = _rewoo(model, context, LONG_PAGES)
    llm_prompt = model.prompts[1]
    assert values["answer"] == "yes" and max(_tokens(model)) <= needed - 1
    assert "[cleared to fit the context: cited evidence, 5 sentences]" in llm_prompt
    assert "Scott Derrickson fact 0" not in llm_prompt
    assert values["evidence"]["#E2"] in llm_prompt  # the latest cited evidence stays whole
    assert values["evidence"]["#E1"].startswith("Scott Derrickson fact 0")  # the state keeps it


def test_rewoo_planner_prompt_that_cannot_fit_ends_context_exhausted_and_resumes() -> None:
    model = SpyModel(outputs=REWOO_RUN, max_tokens=REPLY)
    graph, values = _rewoo(model, Context(context_tokens=40))
    assert values["status"] == "context_exhausted" and values["steps"] == 0 and not model.calls
    assert "window of 40 tokens" in values["stop_reason"]
    again = graph.invoke(None, thread(), context={"context_tokens": 100_000})
    assert again["status"] == "finished" and again["answer"] == "yes"
    assert graph.get_state(thread()).values["stop_reason"] is None


def test_rewoo_llm_step_the_model_refuses_as_too_long_ends_context_exhausted_and_resumes() -> None:
    model = SpyModel(outputs=REWOO_RUN, errors={1: ValueError(OVERFLOW)})
    graph, values = _rewoo(model)
    assert values["status"] == "context_exhausted" and values["answer"] is None
    assert sorted(values["evidence"]) == ["#E1", "#E2"] and values["steps"] == 3
    model.errors.clear()
    again = graph.invoke(None, thread(), context={"context_tokens": 100_000})
    assert again["answer"] == "yes" and again["evidence"]["#E3"] == "Both are American."
    assert again["steps"] == 5 and len(model.calls) == 4  # only the LLM step ran again


PE_RUN: list[ScriptOutput] = [
    "1. Find Scott Derrickson's nationality.\n2. Find Ed Wood's nationality.",  # 0: planner
    "Thought: his page.\nAction: Search[Scott Derrickson]",  # 1: sub-goal 1 (1 step, no answer)
    "1. Find Ed Wood's nationality.",  # 2: replanner, the rest
    "Thought: Wood's page.\nAction: Search[Ed Wood]",  # 3: sub-goal 2 (1 step, no answer)
    "Both are American.\nFinish[yes]",  # 4: replanner, the answer from both results
]
"""Plan-and-Execute with one step per sub-goal: each result is its page's first sentences."""


def _plan_execute(model: SpyModel, context: Context | None = None) -> tuple[Any, dict[str, Any]]:
    graph = pe_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    out = graph.invoke(
        {"question": QUESTION, "subgoal_steps": 1}, thread(), context=context or Context()
    )
    return graph, {**graph.get_state(thread()).values, **out}


def test_plan_execute_replanner_clears_the_oldest_result_to_fit_and_keeps_the_latest() -> None:
    whole = SpyModel(outputs=PE_RUN, max_tokens=REPLY)
    _plan_execute(whole)
    needed = _tokens(whole)[-1]
    model = SpyModel(outputs=PE_RUN, max_tokens=REPLY)
    context = Context(context_tokens=needed + REPLY - 1, keep_observations=1)
    _, values = _plan_execute(model, context)
    replanner = model.prompts[-1]
    assert values["answer"] == "yes" and max(_tokens(model)) <= needed - 1
    first, latest = values["subgoals"]
    assert (
        "[cleared to fit the context: no answer (budget_exhausted), last observation of 5 "
        "sentences]" in replanner
    )
    assert first["last_observation"] not in replanner and latest["last_observation"] in replanner
    assert first["last_observation"].startswith("Scott Derrickson (born")  # the state keeps it
    assert replanner.count(f"Question: {QUESTION}") == 1


def test_plan_execute_planner_shows_fewer_examples_to_fit_the_window() -> None:
    whole = SpyModel(outputs=PE_RUN, max_tokens=REPLY)
    _plan_execute(whole)
    needed = _tokens(whole)[0]
    model = SpyModel(outputs=PE_RUN, max_tokens=REPLY)
    _plan_execute(model, Context(context_tokens=needed + REPLY - 1))
    assert _tokens(model)[0] <= needed - 1 and model.texts[0][-1].endswith(f"Question: {QUESTION}")
    assert 1 < model.prompts[0].count("Question:") < whole.prompts[0].count("Question:")


def test_plan_execute_replanner_the_model_refuses_ends_context_exhausted_and_resumes() -> None:
    model = SpyModel(outputs=PE_RUN, errors={4: ValueError(OVERFLOW)})
    graph, values = _plan_execute(model)
    assert values["status"] == "context_exhausted" and values["answer"] is None
    assert len(values["subgoals"]) == 2 and "context window" in values["stop_reason"]
    model.errors.clear()
    again = graph.invoke(None, thread(), context={"context_tokens": 100_000})
    assert again["status"] == "finished" and again["answer"] == "yes"
    assert len(model.calls) == 6  # only the replanner ran again


def test_plan_execute_planner_prompt_that_cannot_fit_ends_context_exhausted() -> None:
    model = SpyModel(outputs=PE_RUN, max_tokens=REPLY)
    graph, values = _plan_execute(model, Context(context_tokens=40))
    assert values["status"] == "context_exhausted" and not model.calls
    assert graph.invoke(None, thread(), context={"context_tokens": 100_000})["answer"] == "yes"


def test_plan_execute_sub_goal_out_of_context_stops_the_episode_and_continues_inside_it() -> None:
    model = SpyModel(outputs=PE_RUN, errors={3: ValueError(OVERFLOW)})
    graph, values = _plan_execute(model)
    assert values["status"] == "context_exhausted" and len(values["subgoals"]) == 1
    assert "context window" in values["stop_reason"]
    model.errors.clear()
    again = graph.invoke(None, thread(), context={"context_tokens": 100_000})
    assert again["answer"] == "yes" and [s["status"] for s in again["subgoals"]] == [
        "budget_exhausted",
        "budget_exhausted",
    ]
    assert len(model.calls) == 6  # the refused step ran again, nothing else


REFLEXION_TRIAL: list[ScriptOutput] = [
    "Thought 1: a.\nAction 1: Search[Scott Derrickson]",
    "Thought 2: b.\nAction 2: Search[Ed Wood]",
    "Thought 3: c.\nAction 3: Lookup[born]",
    "Thought 4: d.\nAction 4: Lookup[died]",
    "Thought 5: e.\nAction 5: Search[Scott Derrickson]",
    "Thought 6: guess.\nAction 6: Finish[no]",
]
REFLEXION_RUN: list[ScriptOutput] = [*REFLEXION_TRIAL, LESSON, *RIGHT_RUN]
"""A wrong first trial of 6 steps (calls 0-5), the reflection (6), a right second trial (7-9)."""


def _reflexion(model: SpyModel, context: Context | None = None) -> tuple[Any, dict[str, Any]]:
    graph = reflexion_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    inputs = {"question": QUESTION, "gold_answer": "yes", "memory": "off"}
    out = graph.invoke(inputs, thread(), context=context or Context())
    return graph, {**graph.get_state(thread()).values, **out}


def test_reflexion_reflection_clears_the_trials_oldest_observations_to_fit() -> None:
    whole = SpyModel(outputs=REFLEXION_RUN, max_tokens=REPLY)
    _reflexion(whole)
    needed = _tokens(whole)[6]
    model = SpyModel(outputs=REFLEXION_RUN, max_tokens=REPLY)
    context = Context(context_tokens=needed + REPLY - 1, keep_observations=1)
    _, values = _reflexion(model, context)
    reflection = model.prompts[6]
    assert values["answer"] == "yes" and max(_tokens(model)) <= needed - 1
    assert "[cleared to fit the context: Search[Scott Derrickson], 5 sentences" in reflection
    assert "Action 6: Finish[no]" in reflection and f"Question: {QUESTION}" in reflection
    first = values["trials"][0]["trajectory"]
    assert first[0]["observation"].startswith("Scott Derrickson (born")  # the state keeps it


def test_reflexion_trial_out_of_context_stops_the_run_and_continues_inside_the_trial() -> None:
    model = SpyModel(outputs=REFLEXION_RUN, errors={2: ValueError(OVERFLOW)})
    graph, values = _reflexion(model)
    assert values["status"] == "context_exhausted" and not values.get("trials")
    assert "context window" in values["stop_reason"]
    model.errors.clear()
    again = graph.invoke(None, thread(), context={"context_tokens": 100_000})
    assert again["answer"] == "yes" and [t["steps"] for t in again["trials"]] == [6, 3]
    assert len(model.calls) == 11  # the refused step ran again, nothing else


def test_reflexion_reflection_the_model_refuses_ends_context_exhausted_and_resumes() -> None:
    model = SpyModel(outputs=REFLEXION_RUN, errors={6: ValueError(OVERFLOW)})
    graph, values = _reflexion(model)
    assert values["status"] == "context_exhausted" and not values.get("trials")
    model.errors.clear()
    again = graph.invoke(None, thread(), context={"context_tokens": 100_000})
    assert again["answer"] == "yes" and again["trials"][0]["reflection"] == LESSON
    assert len(model.calls) == 11  # only the reflection ran again


def test_lats_expansion_prompt_and_its_request_fit_the_window_together() -> None:
    from lats_scripts import SECOND_BRANCH

    from wikireact.agents.lats.graph import build_graph as lats_graph

    def search(model: SpyModel, context: Context) -> dict[str, Any]:
        graph = lats_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
        inputs = {"question": QUESTION, "gold_answer": "yes", "candidates": 2}
        return dict(graph.invoke(inputs, thread(), context=context))

    whole = SpyModel(outputs=SECOND_BRANCH, max_tokens=REPLY)
    search(whole, Context())
    model = SpyModel(outputs=SECOND_BRANCH, max_tokens=REPLY)
    out = search(model, Context(context_tokens=400))
    assert out["answer"] == "yes" and max(_tokens(model)) <= 400 - REPLY < _tokens(whole)[3]
    expansion = model.texts[3]
    assert expansion[-1].startswith("Propose 2 different candidates for step 2")
    assert expansion.count(f"Question: {QUESTION}") == 1
    assert "".join(expansion).count("Question:") < "".join(whole.texts[3]).count("Question:")


def _lats(model: SpyModel, context: Context) -> tuple[Any, dict[str, Any]]:
    from wikireact.agents.lats.graph import build_graph as lats_graph

    graph = lats_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    inputs = {"question": QUESTION, "gold_answer": "yes", "candidates": 2}
    out = graph.invoke(inputs, thread(), context=context)
    return graph, {**graph.get_state(thread()).values, **out}


@pytest.mark.parametrize(
    "refused",
    [0, 1, 2, 3],  # the root's expansion, the reflection, a value, the second expansion
)
def test_lats_prompt_the_model_refuses_ends_context_exhausted_and_resumes_at_that_node(
    refused: int,
) -> None:
    from lats_scripts import SECOND_BRANCH

    model = SpyModel(outputs=SECOND_BRANCH, errors={refused: ValueError(OVERFLOW)})
    graph, values = _lats(model, Context())
    assert values["status"] == "context_exhausted" and values["answer"] is None
    assert "context window" in values["stop_reason"]
    model.errors.clear()
    again = graph.invoke(None, thread(), context={"context_tokens": 100_000})
    assert again["status"] == "finished" and again["answer"] == "yes"
    assert again["stop_reason"] is None
    assert len(model.calls) == len(SECOND_BRANCH) + 1  # the refused call ran again, nothing else


def test_lats_expansion_that_cannot_fit_ends_context_exhausted_and_resumes() -> None:
    from lats_scripts import SECOND_BRANCH

    model = SpyModel(outputs=SECOND_BRANCH, max_tokens=REPLY)
    graph, values = _lats(model, Context(context_tokens=40))
    assert values["status"] == "context_exhausted" and not model.calls
    again = graph.invoke(None, thread(), context={"context_tokens": 100_000})
    assert again["answer"] == "yes" and len(model.calls) == len(SECOND_BRANCH)
