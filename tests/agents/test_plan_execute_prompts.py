"""Plan-and-Execute prompts: what the planner, the replanner and each sub-goal are shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pe_scripts import WHOLE_RUN
from support import EVAL_DATA, QUESTION, SpyModel

from wikireact import Context, MemorySource
from wikireact.agents.plan_execute.graph import build_graph
from wikireact.agents.plan_execute.prompts import (
    PLAN_KEY,
    REPLAN_KEY,
    default_plan_exemplars,
    load_plan_exemplars,
)
from wikireact.errors import PromptFileError


def prompts_of(wiki: MemorySource, **build: Any) -> list[str]:
    model = SpyModel(outputs=WHOLE_RUN)
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki, **build)
    graph.invoke({"question": QUESTION}, {"configurable": {"thread_id": "p"}})
    return model.prompts


def test_planner_replanner_and_subgoals_see_their_own_prompts(wiki: MemorySource) -> None:
    prompts = prompts_of(wiki)
    plan, first_step, replan, final = prompts[0], prompts[1], prompts[3], prompts[8]
    assert "numbered list" in plan and default_plan_exemplars().plan in plan
    assert plan.rstrip().endswith(f"Question: {QUESTION}")
    assert "Question: Find Scott Derrickson's nationality. (part of answering:" in first_step
    assert "Thought 1" in first_step  # the ReAct prompt, with its exemplars
    assert default_plan_exemplars().replan in replan
    assert "1. Find Scott Derrickson's nationality. -> «American»" in replan
    assert "Remaining plan:\n1. Find Ed Wood's nationality." in replan
    assert "at most 3" in replan  # sub-goals left of the default 4
    assert "2. Find where Ed Wood was born. -> «Poughkeepsie, New York»" in final


def test_the_replanner_is_told_when_only_an_answer_can_come(wiki: MemorySource) -> None:
    model = SpyModel(outputs=[*WHOLE_RUN[:3], "Finish[yes]"])
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    graph.invoke(
        {"question": QUESTION}, {"configurable": {"thread_id": "p"}}, context=Context(max_steps=2)
    )
    asked = model.prompts[3].split(f"Question: {QUESTION}")[-1]  # after the exemplars
    assert "budget is spent" in model.prompts[3] and "Remaining plan" not in asked


def test_a_retry_shows_the_reason(wiki: MemorySource) -> None:
    model = SpyModel(outputs=["I will search.", *WHOLE_RUN])
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    graph.invoke({"question": QUESTION}, {"configurable": {"thread_id": "p"}})
    assert "could not be read: no numbered sub-goal found" in model.prompts[1]
    assert "could not be read" not in model.prompts[0]


def test_shipped_exemplars_are_no_evaluation_question() -> None:
    shipped = default_plan_exemplars()
    for item in EVAL_DATA:
        assert item["question"] not in shipped.plan + shipped.replan
    assert "Scott Derrickson" not in shipped.plan + shipped.replan  # HotpotQA's dev set has it


def test_a_prompt_file_replaces_the_exemplars(tmp_path: Path, wiki: MemorySource) -> None:
    path = tmp_path / "prompts.json"
    path.write_text(
        json.dumps(
            {
                PLAN_KEY: "Question: Is Paris in France?\n1. Find the country of Paris.",
                REPLAN_KEY: "Question: Is Paris in France?\nResults:\n1. x -> France\nReply: Finish[yes]",
            }
        )
    )
    prompts = prompts_of(wiki, plan_exemplars=load_plan_exemplars(path))
    assert "1. Find the country of Paris." in prompts[0] and "Danube" not in prompts[0]
    assert "Reply: Finish[yes]" in prompts[3]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({REPLAN_KEY: "Question: q\nReply: Finish[a]"}, "has no 'planexecute_plan_simple3' key"),
        ({PLAN_KEY: "Question: q\nNo list here.", REPLAN_KEY: "x"}, "holds no usable plan"),
        ({PLAN_KEY: "Question: q\n1. a", REPLAN_KEY: "Question: q\n1. a"}, "no usable reply"),
    ],
)
def test_an_unusable_prompt_file_is_one_line(tmp_path: Path, content: dict, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(PromptFileError, match=message) as error:
        load_plan_exemplars(path)
    assert "\n" not in str(error.value)
