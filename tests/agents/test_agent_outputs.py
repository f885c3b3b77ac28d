"""One output vocabulary for every agent: what `graph.invoke` returns has the same keys.

A caller (the CLI's `--json`, an evaluation, a pipeline) reads any agent's result by the
same names; an agent may add its own (ReWOO's plan, Reflexion's trials) beside them.
"""

from __future__ import annotations

import pytest
from support import GOOD_RUN, QUESTION, thread
from test_agent_settings import OWN_FIELDS, graph_of

from wikireact.agents import AGENTS
from wikireact.models.scripted import ScriptOutput

COMMON = {"answer", "status", "steps", "trajectory", "usage", "audit", "model_calls"}
"""The keys every agent's output has."""
ACT_RUN: list[ScriptOutput] = [
    "Action 1: Search[Scott Derrickson]",
    "Action 2: Search[Ed Wood]",
    "Action 3: Finish[yes]",
]


@pytest.mark.parametrize("agent", list(AGENTS))
def test_every_agent_outputs_the_common_keys(agent: str) -> None:
    out = graph_of(agent).invoke({"question": QUESTION, **OWN_FIELDS[agent]}, thread())
    assert out["status"] == "finished"
    assert COMMON <= set(out), COMMON - set(out)
    assert out["model_calls"] >= 1


def test_react_counts_one_model_call_per_step() -> None:
    out = graph_of("react").invoke({"question": QUESTION}, thread())
    assert out["model_calls"] == out["steps"] == len(GOOD_RUN)


def test_the_act_method_outputs_the_common_keys() -> None:
    graph = graph_of("react", ACT_RUN)
    out = graph.invoke({"question": QUESTION}, thread(), context={"method": "act"})
    assert COMMON <= set(out), COMMON - set(out)
    assert out["model_calls"] == out["steps"] == len(ACT_RUN)
