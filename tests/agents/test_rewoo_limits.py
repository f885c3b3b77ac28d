"""ReWOO under small recursion limits: refused at the door, or stopped with a resumable status.

Never `GraphRecursionError`: at every limit the door accepts, a run ends `finished` or
`recursion_limit`; runs repeated at that limit each record progress and finish the
episode as one run would; a run with a larger limit continues a stopped one.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from support import PAGES, QUESTION, SpyModel, thread

from wikireact import MemorySource
from wikireact.agents.rewoo import MIN_RECURSION_LIMIT
from wikireact.agents.rewoo.graph import build_graph
from wikireact.context import SUPERSTEPS_PER_STEP
from wikireact.episode.compiled import EpisodeGraph
from wikireact.errors import ConfigurationError
from wikireact.models.scripted import ScriptOutput

PLAN = (
    "Plan: Find Scott Derrickson.\n#E1 = Search[Scott Derrickson]\n"
    "Plan: Name a filmmaker to compare.\n#E2 = LLM[Name a filmmaker to compare with #E1]\n"
    "Plan: Find him.\n#E3 = Search[#E2]\n"
    "Plan: Where was he born?\n#E4 = Lookup[born]"
)
SCRIPT: list[ScriptOutput] = [PLAN, "Ed Wood", "Thought: both American.\nFinish[yes]"]
"""Four rounds (each step waits for the one before): 12 supersteps in one run (input included)."""


def episode(thread_id: str) -> tuple[EpisodeGraph, SpyModel, RunnableConfig]:
    model = SpyModel(outputs=SCRIPT)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    return graph, model, thread(thread_id)


def summary(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(s["kind"], s["action"], s["observation"]) for s in result["trajectory"]]


def whole_run() -> dict[str, Any]:
    graph, _, config = episode("whole")
    return graph.invoke({"question": QUESTION}, config)


@pytest.mark.parametrize("limit", range(1, 13))
def test_every_limit_is_refused_at_the_door_or_ends_resumable(limit: int) -> None:
    graph, model, config = episode(f"limit-{limit}")
    limited: RunnableConfig = {**config, "recursion_limit": limit}
    try:
        result = graph.invoke({"question": QUESTION}, limited)
    except ConfigurationError as exc:  # the door: one line, nothing ran
        assert limit < max(MIN_RECURSION_LIMIT, SUPERSTEPS_PER_STEP)
        assert "\n" not in str(exc) and not model.calls
        return
    assert limit >= MIN_RECURSION_LIMIT, "the door let through a limit ReWOO cannot work in"
    runs = 1
    while result["status"] == "recursion_limit":  # continue at the same limit
        before = result["steps"]
        result = graph.invoke(None, limited)
        runs += 1
        assert result["steps"] > before or result["status"] == "finished", "a run made no progress"
        assert runs <= 12
    whole = whole_run()
    assert result["status"] == "finished" and result["answer"] == "yes"
    assert summary(result) == summary(whole)
    assert len(model.calls) == result["model_calls"] == 3, "a model call ran twice"
    assert (runs == 1) == (limit >= 12)


def test_a_larger_limit_continues_a_stopped_episode() -> None:
    graph, model, config = episode("grow")
    stopped = graph.invoke({"question": QUESTION}, {**config, "recursion_limit": 5})
    assert stopped["status"] == "recursion_limit" and stopped["answer"] is None
    assert stopped["steps"] >= 2  # the plan and the first round are kept
    done = graph.invoke(None, {**config, "recursion_limit": 100})
    assert done["status"] == "finished" and done["answer"] == "yes"
    assert summary(done) == summary(whole_run()) and len(model.calls) == 3
    # the question given again (as `ask`/eval do) continues it the same way
    graph, model, config = episode("again")
    graph.invoke({"question": QUESTION}, {**config, "recursion_limit": 6})
    again = graph.invoke({"question": QUESTION}, {**config, "recursion_limit": 100})
    assert again["status"] == "finished" and len(model.calls) == 3


def test_a_stop_before_a_valid_plan_plans_again_on_resume() -> None:
    model = SpyModel(outputs=["Plan: none yet.", *SCRIPT])
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    config = thread("replan")
    limit = max(MIN_RECURSION_LIMIT, SUPERSTEPS_PER_STEP)
    result = graph.invoke({"question": QUESTION}, {**config, "recursion_limit": limit})
    while result["status"] == "recursion_limit":
        result = graph.invoke(None, {**config, "recursion_limit": limit})
    assert result["status"] == "finished" and [s["kind"] for s in result["trajectory"]][:2] == [
        "invalid",
        "plan",
    ]
