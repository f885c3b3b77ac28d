"""Every agent stops before LangGraph's recursion limit, at any limit its door accepts, and resumes.

A nested episode (a Plan-and-Execute sub-goal, a Reflexion trial) the limit cut is not its
outcome: the run stops with `recursion_limit`, nothing is replanned, judged or remembered
about it, and a run with a larger limit continues inside it to the uncut run's result.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command
from pe_scripts import WHOLE_RUN
from reflexion_scripts import LESSON, RIGHT_RUN, WRONG_GUESS
from support import PAGES, QUESTION, SpyModel, thread
from test_rewoo import ANSWER, TWO_SEARCHES

from wikireact import MemorySource
from wikireact.agents import load_agent
from wikireact.agents.reflexion.memory import read_lessons
from wikireact.episode.compiled import EpisodeGraph
from wikireact.errors import ConfigurationError, ModelCallError
from wikireact.graph import run_to_end

SCRIPTS: dict[str, list[Any]] = {
    "plan-execute": WHOLE_RUN,  # plan, a 2-step sub-goal, a new list, a 4-step one, Finish
    "reflexion": [WRONG_GUESS, LESSON, *RIGHT_RUN],  # a wrong 1-step trial, a lesson, 3 steps
    "rewoo": [TWO_SEARCHES, ANSWER],  # two rounds of steps
}
INPUTS: dict[str, dict[str, Any]] = {
    "plan-execute": {"question": QUESTION},
    "reflexion": {"question": QUESTION, "gold_answer": "yes"},
    "rewoo": {"question": QUESTION},
}
UNCUT = 10_000


def build(
    agent: str,
    saver: BaseCheckpointSaver | None = None,
    script: list[Any] | None = None,
    **kw: Any,
) -> tuple[EpisodeGraph, SpyModel]:
    model = SpyModel(outputs=script or SCRIPTS[agent])
    graph = load_agent(agent).build_graph(
        saver or InMemorySaver(), model=model, wiki=MemorySource(PAGES), **kw
    )
    return graph, model


def at(limit: int) -> RunnableConfig:
    return {**thread(), "recursion_limit": limit}


def outcome(out: dict[str, Any]) -> tuple[Any, ...]:
    """What a run did and ended with (audit records hold times)."""
    return (out["status"], out["answer"], out["steps"], out["trajectory"], out["usage"])


def least(agent: str) -> int:
    return (
        load_agent(agent)
        .build_graph(InMemorySaver(), model=SpyModel(outputs=["x"]))
        .least_limit.limit
    )


@pytest.mark.parametrize(
    ("agent", "label"),
    [
        ("react", "ReAct"),
        ("rewoo", "ReWOO"),
        ("plan-execute", "Plan-and-Execute"),
        ("reflexion", "Reflexion"),
    ],
)
def test_the_door_names_the_agents_own_least_limit(agent: str, label: str) -> None:
    graph = load_agent(agent).build_graph(InMemorySaver(), model=SpyModel(outputs=["x"]))
    minimum = least(agent)
    with pytest.raises(ConfigurationError) as refused:
        graph.invoke({"question": QUESTION}, at(minimum - 1))
    assert str(refused.value) == (
        f"recursion_limit {minimum - 1} leaves no room for one {label} step: use at least {minimum}"
    )
    assert graph.get_state(thread()).values == {}  # nothing ran


def test_the_least_limits() -> None:
    assert least("react") == 5  # START + reason, parse, act, observe with one superstep left
    assert least("plan-execute") == 7  # START, plan and its retry, execute with room to replan
    assert least("reflexion") == 6  # START, recall, trial, evaluate, reflect, record


@pytest.mark.parametrize("agent", ["plan-execute", "reflexion", "rewoo"])
def test_every_accepted_limit_stops_resumably_and_resumes_to_the_uncut_result(
    agent: str,
) -> None:
    reference, _ = build(agent)
    uncut = reference.invoke(INPUTS[agent], at(UNCUT))
    assert (uncut["status"], uncut["answer"]) == ("finished", "yes")
    for limit in range(least(agent), 31):
        graph, model = build(agent)
        out = graph.invoke(INPUTS[agent], at(limit))  # never GraphRecursionError
        assert out["status"] in ("recursion_limit", "finished"), limit
        done = graph.invoke(None, at(UNCUT))
        assert outcome(done) == outcome(uncut), limit
        assert len(model.calls) == len(SCRIPTS[agent]), limit  # no model call made twice


@pytest.mark.parametrize("agent", ["plan-execute", "reflexion", "rewoo"])
def test_runs_at_the_least_limit_make_progress_until_the_uncut_result(agent: str) -> None:
    reference, _ = build(agent)
    uncut = reference.invoke(INPUTS[agent], at(UNCUT))
    graph, model = build(agent)
    out = graph.invoke(INPUTS[agent], at(least(agent)))
    runs = 1
    while out["status"] == "recursion_limit":
        out = graph.invoke(None, at(least(agent)))
        runs += 1
        assert runs < 20
    assert outcome(out) == outcome(uncut)
    assert len(model.calls) == len(SCRIPTS[agent]) and runs > 2


def test_a_cut_sub_goal_is_no_result_and_resumes_inside(
    checkpointer: BaseCheckpointSaver,
) -> None:
    """At limit 10 a sub-goal episode takes 2 steps: sub-goal 2 (4 steps) is cut after 2."""
    reference, _ = build("plan-execute")
    uncut = reference.invoke(INPUTS["plan-execute"], at(UNCUT))
    graph, model = build("plan-execute", checkpointer)
    out = graph.invoke(INPUTS["plan-execute"], at(10))
    assert (out["status"], out["answer"]) == ("recursion_limit", None)
    assert [r["steps"] for r in out["subgoals"]] == [2]  # the cut one is no result
    assert [p["call"] for p in out["plans"]] == ["plan", "replan"]  # nothing replanned after it
    done = graph.invoke(None, at(UNCUT))
    assert outcome(done) == outcome(uncut)
    assert [r["steps"] for r in done["subgoals"]] == [2, 4]
    assert len(model.calls) == len(WHOLE_RUN)  # the cut sub-goal's 2 steps were not taken again


def test_a_cut_trial_is_not_judged_and_leaves_no_lesson(checkpointer: BaseCheckpointSaver) -> None:
    """The only trial (Search, Search, Finish: right) is cut after 1 step at limit 7; judged
    `no_answer`, it used to leave a lesson in the store for every later run."""
    given = {**INPUTS["reflexion"], "max_trials": 1}
    reference, _ = build("reflexion", script=RIGHT_RUN, store=InMemoryStore())
    uncut = reference.invoke(given, at(UNCUT))
    assert (uncut["answer"], len(uncut["trials"])) == ("yes", 1)
    store = InMemoryStore()
    graph, model = build("reflexion", checkpointer, script=RIGHT_RUN, store=store)
    out = graph.invoke(given, at(7))
    assert (out["status"], out["answer"], out.get("trials") or []) == ("recursion_limit", None, [])
    assert read_lessons(store, QUESTION) == []  # no lesson about the cut trial
    done = graph.invoke(None, at(UNCUT))
    assert outcome(done) == outcome(uncut)
    assert [t["verdict"] for t in done["trials"]] == ["correct"]
    assert read_lessons(store, QUESTION) == []
    assert len(model.calls) == len(RIGHT_RUN)


def test_only_the_finished_trials_lesson_is_stored_when_the_next_is_cut(
    checkpointer: BaseCheckpointSaver,
) -> None:
    """Trial 1 (a wrong guess) ends and leaves its lesson; trial 2 is cut, then continued."""
    store = InMemoryStore()
    graph, model = build("reflexion", checkpointer, store=store)
    reference, _ = build("reflexion", store=InMemoryStore())
    uncut = reference.invoke(INPUTS["reflexion"], at(UNCUT))
    out = graph.invoke(INPUTS["reflexion"], at(9))
    while out["status"] == "recursion_limit":
        assert read_lessons(store, QUESTION) in ([], [LESSON])
        out = graph.invoke(None, at(9))
    assert outcome(out) == outcome(uncut)
    assert [t["verdict"] for t in out["trials"]] == ["wrong", "correct"]
    assert read_lessons(store, QUESTION) == [LESSON]
    assert len(model.calls) == len(SCRIPTS["reflexion"])


def test_a_crash_inside_a_continued_sub_goal_resumes_there(
    checkpointer: BaseCheckpointSaver,
) -> None:
    reference, _ = build("plan-execute")
    uncut = reference.invoke(INPUTS["plan-execute"], at(UNCUT))
    graph, model = build("plan-execute", checkpointer)
    assert graph.invoke(INPUTS["plan-execute"], at(10))["status"] == "recursion_limit"
    model.errors[6] = ConnectionError("model down")  # the continued sub-goal's third step
    with pytest.raises(ModelCallError):
        graph.invoke(None, at(UNCUT))
    model.errors.clear()
    done = graph.invoke(None, at(UNCUT))
    assert outcome(done) == outcome(uncut)
    assert len(model.calls) == len(WHOLE_RUN) + 1  # only the failed call ran again


def test_approval_pauses_inside_a_continued_sub_goal_and_resumes(
    checkpointer: BaseCheckpointSaver,
) -> None:
    reference, _ = build("plan-execute")
    uncut = reference.invoke(INPUTS["plan-execute"], at(UNCUT))
    graph, model = build("plan-execute", checkpointer)
    assert graph.invoke(INPUTS["plan-execute"], at(10))["status"] == "recursion_limit"
    out = graph.invoke(None, at(UNCUT), context={"approve": True})
    proposed = []
    while out.get("__interrupt__"):
        (pending,) = out["__interrupt__"]
        proposed.append(pending.value["proposed_action"])
        out = graph.invoke(Command(resume={"approve": True}), at(UNCUT))
    assert proposed == ["Lookup[died]"]  # the cut sub-goal's third step, in that sub-goal
    assert outcome(out)[:4] == outcome(uncut)[:4]
    assert len(model.calls) == len(WHOLE_RUN)


@pytest.mark.parametrize("agent", ["plan-execute", "reflexion"])
def test_run_to_end_continues_a_run_the_limit_stopped(agent: str) -> None:
    """`run_to_end` (what `eval` runs) continues inside the cut sub-goal or trial."""
    reference, _ = build(agent)
    uncut = reference.invoke(INPUTS[agent], at(UNCUT))
    graph, model = build(agent)
    inputs = {k: v for k, v in INPUTS[agent].items() if k != "question"}
    stopped = run_to_end(graph, QUESTION, at(9), inputs=inputs)
    assert stopped["status"] == "recursion_limit"
    done = run_to_end(graph, QUESTION, at(UNCUT), inputs=inputs)
    assert outcome(done) == outcome(uncut)
    assert len(model.calls) == len(SCRIPTS[agent])
