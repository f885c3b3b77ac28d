"""A small local model's Plan-and-Execute replies: one sub-goal a hop, a Finish it found.

Under the sub-goal grammar alone, Gemma 3 270M listed four sub-goals for "Who painted the
Mona Lisa?" (three the same) and finished every question with `Finish[answer]`, the
instruction's placeholder: EM 0% on 20 single-hop questions whose pages it had opened.
The grammars are built from the agent's own planner and replanner prompts and checked with
llama.cpp's grammar sampler.
"""

from __future__ import annotations

from typing import Any

import pytest
from gbnf_samples import llama_accepts
from tiny_gguf import TEMPLATE, write_tiny_model

from wikireact.agents.plan_execute.planning import reply_form
from wikireact.agents.plan_execute.prompts import (
    SMALL_MODEL_EXEMPLARS,
    planner_messages,
    replanner_messages,
)
from wikireact.agents.plan_execute.state import SubgoalResult
from wikireact.models.local.shaped_replies import local_reply_grammar

pytest.importorskip("llama_cpp")

SINGLE = "Who painted the Mona Lisa?"
BRIDGE = "On which river does the capital of the Czech Republic stand?"


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A llama.cpp model whose vocabulary spells any text (the tiny model's bytes)."""
    from wikireact.models.local.llama import LlamaCppChatModel

    path = write_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny.gguf")
    return LlamaCppChatModel(model_path=str(path), chat_template=TEMPLATE)._client()


def _turns(messages: list[Any]) -> list[dict[str, str]]:
    from wikireact.models.local.llama import _to_gemma_turns

    return _to_gemma_turns(messages)


def _result(number: int, goal: str, answer: str | None) -> SubgoalResult:
    return SubgoalResult(
        number=number,
        goal=goal,
        question=goal,
        status="finished" if answer else "budget_exhausted",
        answer=answer,
        steps=2,
        budget=4,
        last_observation="",
    )


def _plan_grammar(question: str, guard_rails: bool = True) -> str:
    turns = _turns(planner_messages(question, 4, None, SMALL_MODEL_EXEMPLARS))
    return local_reply_grammar(reply_form("plan", 4, "hotpotqa"), turns, None, guard_rails)


def _replan_grammar(question: str, results: list[SubgoalResult], goals_left: int) -> str:
    messages = replanner_messages(question, results, [], goals_left, None, SMALL_MODEL_EXEMPLARS)
    form = reply_form("replan", goals_left, "hotpotqa")
    return local_reply_grammar(form, _turns(messages), None, guard_rails=True)


def test_a_plan_lists_one_sub_goal_a_hop(vocabulary: Any) -> None:
    one, two = "1. Find who painted the Mona Lisa.\n", "2. Find when that painting was painted.\n"
    assert llama_accepts(vocabulary, _plan_grammar(SINGLE), one)
    assert not llama_accepts(vocabulary, _plan_grammar(SINGLE), one + two)
    assert llama_accepts(vocabulary, _plan_grammar(SINGLE, guard_rails=False), one + two)
    hop, then = "1. Find the capital of the Czech Republic.\n", f"2. {BRIDGE}\n"
    assert llama_accepts(vocabulary, _plan_grammar(BRIDGE), hop + then)  # then the question
    assert not llama_accepts(vocabulary, _plan_grammar(BRIDGE), hop + "2. Find its river.\n")
    assert not llama_accepts(vocabulary, _plan_grammar(BRIDGE), hop + then + "3. Find it.\n")
    unnamed = "Who published the theory of general relativity?"  # no title: one hop
    assert not llama_accepts(vocabulary, _plan_grammar(unnamed), one + two)


def test_the_replanner_finishes_with_an_answer_a_sub_goal_found(vocabulary: Any) -> None:
    done = [_result(1, "Find who painted the Mona Lisa.", "Leonardo da Vinci")]
    grammar = _replan_grammar(SINGLE, done, goals_left=3)
    assert llama_accepts(vocabulary, grammar, "Finish[Leonardo da Vinci]")
    for wrong in ("Finish[answer]", "Finish[Leonardo]", "1. Find when it was painted.\n"):
        assert not llama_accepts(vocabulary, grammar, wrong), wrong
    final = _replan_grammar(SINGLE, done, goals_left=0)  # the budget spent: the final answer
    assert llama_accepts(vocabulary, final, "Finish[Leonardo da Vinci]")
    assert not llama_accepts(vocabulary, final, "Finish[answer]")


def test_a_bridge_is_not_finished_before_its_second_hop(vocabulary: Any) -> None:
    first = [_result(1, "Find the capital of the Czech Republic.", "Prague")]
    grammar = _replan_grammar(BRIDGE, first, goals_left=3)
    hop = "1. On which river does Prague stand?\n"  # the question's own hop, the entity named
    assert llama_accepts(vocabulary, grammar, hop)
    assert not llama_accepts(vocabulary, grammar, f"1. {BRIDGE}\n")
    for wrong in ("1. Find the capital of the Czech Republic. -> «Prague»\n", "Finish[Prague]"):
        assert not llama_accepts(vocabulary, grammar, wrong)
    both = [*first, _result(2, BRIDGE, "Vltava")]
    grammar = _replan_grammar(BRIDGE, both, goals_left=2)
    assert llama_accepts(vocabulary, grammar, "Finish[Vltava]")  # what the question's hop found
    for wrong in ("Finish[Prague]", "Finish[answer]"):
        assert not llama_accepts(vocabulary, grammar, wrong)


def test_a_bridge_s_second_hop_names_the_entity_the_first_found() -> None:
    from wikireact.models.local.plan_shape import hop_question, question_plan

    cases = {
        BRIDGE: ("Prague", "On which river does Prague stand?"),
        "On what date was the capital of Brazil founded?": (
            "Brasília",
            "On what date was Brasília founded?",
        ),
        "Who wrote Hamlet?": ("x", None),  # no relation: unchanged
    }
    for question, (entity, expected) in cases.items():
        plan = question_plan(question)
        assert plan is not None
        assert hop_question(question, plan, entity) == (expected or question)
