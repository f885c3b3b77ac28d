"""The small-model prompt variant of the planners and the reflection: chosen by the model.

A model asking for the `small` variant (Gemma 3 270M, a small GGUF) gets short planner and
reflection prompts whose exemplars are in the very form its reply grammar admits, so that
what it copies parses; every other model keeps the default prompts exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pe_scripts import WHOLE_RUN
from support import PAGES, QUESTION, SpyModel

from wikireact import MemorySource
from wikireact.agents.plan_execute.graph import build_graph as plan_execute_graph
from wikireact.agents.plan_execute.prompts import SMALL_MODEL_EXEMPLARS, default_plan_exemplars
from wikireact.agents.plan_execute.replies import read_reply
from wikireact.agents.reflexion.prompts import (
    REFLECT_INSTRUCTION,
    SMALL_REFLECT_INSTRUCTION,
    reflection_messages,
)
from wikireact.agents.rewoo.graph import build_graph as rewoo_graph
from wikireact.agents.rewoo.plan import Plan, read_plan
from wikireact.agents.rewoo.prompts import SMALL_MODEL_PLANS, SMALL_PLANNER_INSTRUCTION
from wikireact.models.scripted import ScriptOutput
from wikireact.prompting.exemplars import default_plans

REWOO_RUN: list[ScriptOutput] = [
    "Plan: Find Ed Wood.\n#E1 = Search[Ed Wood]",
    "Finish[American]",
]
OFFLINE_SETS = Path(__file__).parents[1] / "data"


class SmallSpy(SpyModel):
    """A recording scripted model that asks for the small-model prompt variant."""

    prompt_variant: str = "small"


def first_prompt(model: SpyModel, build: Any) -> str:
    """Run the agent's graph on `model` and return its first (the planner's) prompt."""
    graph = build(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    graph.invoke({"question": QUESTION}, {"configurable": {"thread_id": "small"}})
    return model.prompts[0]


def test_a_small_model_gets_the_short_rewoo_planner_prompt() -> None:
    small = first_prompt(SmallSpy(outputs=REWOO_RUN), rewoo_graph)
    assert small.startswith(SMALL_PLANNER_INSTRUCTION.format(max_steps=7)[:40])
    assert all(example.plan in small for example in SMALL_MODEL_PLANS)
    default = first_prompt(SpyModel(outputs=REWOO_RUN), rewoo_graph)
    assert SMALL_PLANNER_INSTRUCTION[:40] not in default
    assert all(example.plan in default for example in default_plans())


def test_a_small_model_gets_the_short_plan_execute_exemplars() -> None:
    small = first_prompt(SmallSpy(outputs=WHOLE_RUN), plan_execute_graph)
    assert SMALL_MODEL_EXEMPLARS.plan in small
    default = first_prompt(SpyModel(outputs=WHOLE_RUN), plan_execute_graph)
    assert default_plan_exemplars().plan in default and SMALL_MODEL_EXEMPLARS.plan not in default


def test_the_small_reflection_prompt_is_chosen_by_variant() -> None:
    steps: list[Any] = []
    small = reflection_messages(QUESTION, steps, "wrong answer", "react", "small")
    assert small[0].content == SMALL_REFLECT_INSTRUCTION
    assert reflection_messages(QUESTION, steps, "wrong", "react")[0].content == REFLECT_INSTRUCTION


def test_the_small_exemplars_are_in_the_form_their_grammar_admits(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from gbnf_samples import llama_accepts
    from tiny_gguf import TEMPLATE, write_tiny_model

    from wikireact.agents.plan_execute.planning import reply_form
    from wikireact.agents.reflexion.prompts import REFLECTION_FORM
    from wikireact.models.local.llama import LlamaCppChatModel
    from wikireact.models.local.reply_grammars import reply_grammar
    from wikireact.models.reply_form import ReplyForm

    path = write_tiny_model(tmp_path / "tiny.gguf")
    vocabulary = LlamaCppChatModel(model_path=str(path), chat_template=TEMPLATE)._client()
    plan = reply_grammar(ReplyForm("rewoo_plan", 7))
    assert all(llama_accepts(vocabulary, plan, e.plan + "\n") for e in SMALL_MODEL_PLANS)
    goals = reply_grammar(reply_form("plan", 4, "hotpotqa"))
    listed = SMALL_MODEL_EXEMPLARS.plan.split("Question: ")[1:]
    assert all(
        llama_accepts(vocabulary, goals, block.partition("\n")[2].rstrip() + "\n")
        for block in listed
    )
    lesson = SMALL_REFLECT_INSTRUCTION.rpartition("Example lesson: ")[2]
    assert llama_accepts(vocabulary, reply_grammar(REFLECTION_FORM), lesson)


def test_the_small_exemplars_are_no_offline_question() -> None:
    questions = [
        item.get("question") or item.get("claim")
        for file in OFFLINE_SETS.glob("offline_*.json")
        for item in json.loads(file.read_text(encoding="utf-8"))
    ]
    shown = "\n".join(
        [*(e.question for e in SMALL_MODEL_PLANS), SMALL_MODEL_EXEMPLARS.plan]
        + [SMALL_MODEL_EXEMPLARS.replan, SMALL_REFLECT_INSTRUCTION]
    )
    assert questions and not [q for q in questions if q and q in shown]
    assert all(isinstance(read_plan(e.plan, 7), Plan) for e in SMALL_MODEL_PLANS)
    for block in SMALL_MODEL_EXEMPLARS.plan.split("Question: ")[1:]:
        assert read_reply(block.partition("\n")[2], finish_allowed=False).subgoals
