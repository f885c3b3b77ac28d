"""Every agent's settings are read alike, and a setting in the wrong place is refused.

Whole numbers are read as `Context` reads its own (`read_int`: `2` or `"2"`), whether they
are `Context` fields (`max_steps`) or an agent's input fields (Plan-and-Execute's
`max_subgoals`/`subgoal_steps`, Reflexion's `max_trials`). An agent's input field given in
the context, or a `Context` field given in the input, would be dropped without a word by
LangGraph: each agent's door refuses it in one line naming where it belongs, before
anything is stored. Through `graph.invoke`, for every agent.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from lats_scripts import SELF_CHECKED
from pe_scripts import WHOLE_RUN
from support import GOOD_RUN, PAGES, QUESTION, thread

from wikireact import MemorySource, ScriptedChatModel
from wikireact.agents import AGENTS, load_agent
from wikireact.errors import ConfigurationError
from wikireact.models.scripted import ScriptOutput

REWOO_RUN: list[ScriptOutput] = [
    "Plan: Find both.\n#E1 = Search[Scott Derrickson]\nPlan: Wood.\n#E2 = Search[Ed Wood]",
    "Thought: both are American.\nFinish[yes]",
]
SCRIPTS: dict[str, list[ScriptOutput]] = {
    "react": GOOD_RUN,
    "rewoo": REWOO_RUN,
    "plan-execute": WHOLE_RUN,
    "reflexion": GOOD_RUN,
    "lats": SELF_CHECKED,
}
OWN_FIELDS: dict[str, dict[str, Any]] = {
    "react": {},
    "rewoo": {},
    "plan-execute": {"max_subgoals": 3, "subgoal_steps": 4},
    "reflexion": {"max_trials": 2, "gold_answer": "yes"},
    "lats": {"candidates": 2, "max_iterations": 3, "gold_answer": "yes"},
}
"""Each agent's own input fields besides the question, with values its script runs with."""


def graph_of(agent: str, outputs: list[ScriptOutput] | None = None) -> Any:
    model = ScriptedChatModel(outputs=SCRIPTS[agent] if outputs is None else outputs)
    return load_agent(agent).build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))


@pytest.mark.parametrize("agent", list(AGENTS))
def test_numbers_as_text_are_read_for_every_agent(agent: str) -> None:
    graph = graph_of(agent)
    own = {name: str(value) for name, value in OWN_FIELDS[agent].items() if name != "gold_answer"}
    inputs = {"question": QUESTION, **own}
    out = graph.invoke(inputs, thread(), context={"max_steps": "7", "repetition_limit": "3"})
    assert (out["answer"], out["status"]) == ("yes", "finished")


def test_plan_execute_applies_its_limits_given_as_text() -> None:
    graph = graph_of("plan-execute")
    out = graph.invoke({"question": QUESTION, "max_subgoals": "1", "subgoal_steps": "1"}, thread())
    # one sub-goal of one step; the replanner may then only answer
    assert [(g["budget"], g["steps"]) for g in out["subgoals"]] == [(1, 1)]
    assert out["plans"][-1]["finish"] == "American"


@pytest.mark.parametrize(
    ("agent", "field", "value", "message"),
    [
        (
            "plan-execute",
            "max_subgoals",
            "three",
            "max_subgoals must be a whole number, got 'three'",
        ),
        ("plan-execute", "subgoal_steps", "0", "subgoal_steps must be from 1 to 100, got 0"),
        ("plan-execute", "max_subgoals", 1.5, "max_subgoals must be a whole number, got 1.5"),
        ("reflexion", "max_trials", "two", "max_trials must be a whole number, got 'two'"),
        ("reflexion", "max_trials", "0", "max_trials must be from 1 to 20, got 0"),
    ],
)
def test_a_bad_number_is_refused_in_one_line(
    agent: str, field: str, value: Any, message: str
) -> None:
    graph = graph_of(agent)
    with pytest.raises(ConfigurationError) as error:
        graph.invoke({"question": QUESTION, field: value}, thread())
    assert str(error.value) == message


@pytest.mark.parametrize("agent", list(AGENTS))
@pytest.mark.parametrize("field", ["max_steps", "model", "task"])
def test_a_context_setting_in_the_input_is_refused_for_every_agent(agent: str, field: str) -> None:
    graph = graph_of(agent)
    with pytest.raises(ConfigurationError) as error:
        graph.invoke({"question": QUESTION, field: "2"}, thread())
    assert str(error.value) == (
        f"{field} is a context setting, not an input field: give it in the context "
        f'(context={{"{field}": ...}})'
    )
    assert not graph.get_state(thread()).values  # nothing was stored


@pytest.mark.parametrize(
    ("agent", "field"),
    [(agent, field) for agent in AGENTS for field in ["question", *OWN_FIELDS[agent]]],
)
def test_an_input_field_in_the_context_is_refused_for_every_agent(agent: str, field: str) -> None:
    graph = graph_of(agent)
    value = QUESTION if field == "question" else OWN_FIELDS[agent][field]
    with pytest.raises(ConfigurationError) as error:
        graph.invoke({"question": QUESTION}, thread(), context={field: value})
    assert str(error.value) == (
        f"{field} is an input field of this agent, not a context setting: give it in the "
        f'input ({{"question": ..., "{field}": ...}})'
    )
    assert not graph.get_state(thread()).values
