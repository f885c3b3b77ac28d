"""The local model on a FEVER claim: the small prompt speaks of claims, and a Finish is one of the labels."""

from __future__ import annotations

import re
from typing import Any

from wikireact.models.local.step_form import is_claim, question, step_form
from wikireact.models.local.step_grammar import step_grammar
from wikireact.prompting import small_model as small_model_prompt
from wikireact.state import Step

CLAIM = "Jupiter is the largest planet in the Solar System."
OPENED = Step(
    kind="executed",
    thought="I search Jupiter.",
    action="Search[Jupiter]",
    observation="Jupiter is the fifth planet from the Sun, and the largest in the Solar System.",
    raw="",
)


def _turns(task: str, history: list[Step]) -> list[dict[str, str]]:
    from wikireact.models.local.llama import _to_gemma_turns

    messages = small_model_prompt.build_messages(CLAIM, history, "react", task=task)  # type: ignore[arg-type]
    return _to_gemma_turns(messages)


def _form(turns: list[dict[str, str]]) -> dict[str, Any]:
    return step_form(
        turns,
        no_title_answers=True,
        extractive_answers=True,
        no_repeated_searches=True,
        observation_opening=True,
    )


def test_the_small_prompt_states_the_claim_and_label_exemplars() -> None:
    text = "\n".join(t["content"] for t in _turns("fever", [OPENED]))
    assert "Check the claim in steps." in text
    assert text.count(f"Claim: {CLAIM}") == 2  # asked, then repeated after the observation
    assert all(f"Finish[{x}]" in text for x in ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"))
    assert "Question:" not in text


def test_under_a_claim_a_finish_takes_exactly_the_three_labels() -> None:
    turns = _turns("fever", [OPENED])
    assert is_claim(turns) and question(turns) == CLAIM
    grammar = step_grammar(**_form(turns))
    assert '\nanswer ::= "SUPPORTS" | "REFUTES" | "NOT ENOUGH INFO"\n' in grammar
    assert "Finish[" in grammar


def test_a_question_keeps_its_extractive_answers() -> None:
    turns = _turns("hotpotqa", [OPENED])
    assert not is_claim(turns) and question(turns) == CLAIM
    grammar = step_grammar(**_form(turns))
    answer = next(line for line in grammar.splitlines() if line.startswith("answer ::="))
    assert "SUPPORTS" not in answer
    assert re.search(r'"(fifth|Jupiter|largest|Sun|Solar)', grammar)
