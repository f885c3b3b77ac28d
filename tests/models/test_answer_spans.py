"""The extractive Finish grammar of the small model: which answers it allows, and which not."""

from __future__ import annotations

import re

import pytest

from wikireact.models.local.answer_spans import answer_rules, answer_type
from wikireact.models.local.step_grammar import step_grammar

OBSERVATION = (
    "Moby-Dick; or, The Whale is an 1851 epic novel by American writer Herman Melville. "
    "Its first edition was published on October 18, 1851 in London (by Richard Bentley). "
    "The painter Vincent van Gogh and J. R. R. Tolkien read it, said 'Saturn', 'Ganymede'."
)
_RULE = re.compile(r'^(\S+) ::= "((?:[^"\\]|\\.)*)"(?: \(?"((?:[^"\\]|\\.)*)" (\S+?)\)?(\?)?)?$')


def allowed_answers(rules: str) -> set[str]:
    """Every Finish argument `rules` allow (they are finite: runs of words)."""
    lines = rules.strip().splitlines()
    starts = lines[0].removeprefix("answer ::= ").split(" | ")
    table: dict[str, tuple[str, str, str, bool]] = {}
    for line in lines[1:]:
        match = _RULE.match(line)
        assert match, line
        name, word, gap, after, optional = match.groups()
        table[name] = (word, gap or "", after or "", optional == "?" or not after)

    def runs(name: str) -> set[str]:
        if name.startswith('"'):
            return {name.strip('"')}
        word, gap, after, may_end = table[name]
        found = {word} if may_end else set()
        if after:
            found |= {word + gap + rest for rest in runs(after)}
        return found

    return set().union(*(runs(start) for start in starts))


def test_a_person_question_allows_whole_names_copied_from_the_observation() -> None:
    rules = answer_rules([OBSERVATION], ["Moby", "the Moby"], question="Who wrote Moby-Dick?")
    assert rules is not None
    answers = allowed_answers(rules)
    assert {"Herman Melville", "Vincent van Gogh", "J. R. R. Tolkien", "Richard Bentley"} <= answers
    assert all(answer in OBSERVATION for answer in answers)
    # no half names, no lower-case starts, no searched title, no run across a sentence or quote
    assert not answers & {"Herman", "Melville", "Gogh", "Tolkien", "Tolkien read it", "writer"}
    assert not [
        a for a in answers if a.lower().startswith("moby") or ". " in a.replace("J. R. R.", "")
    ]
    assert not [a for a in answers if "'" in a or "(" in a]


def test_a_number_question_allows_runs_that_start_with_a_number_or_a_month() -> None:
    rules = answer_rules([OBSERVATION], question="In what year was Moby-Dick published?")
    assert rules is not None
    answers = allowed_answers(rules)
    assert {"1851", "October 18, 1851"} <= answers
    assert not [a for a in answers if not (a[0].isdigit() or a.startswith("October"))]
    assert "1851 epic novel" not in answers  # a number is a number, not what it counts


def test_yes_no_questions_answer_only_yes_or_no_and_untyped_ones_any_run() -> None:
    rules = answer_rules([OBSERVATION], question="Was Moby-Dick published in London?")
    assert rules is not None
    assert allowed_answers(rules) == {"yes", "no"}
    either = answer_rules([OBSERVATION], question="Was it published in London or in Paris?")
    assert {"yes", "no", "London"} <= allowed_answers(either or "")
    untyped = allowed_answers(answer_rules([OBSERVATION], question="Describe it.") or "")
    assert {"epic novel", "writer Herman Melville"} <= untyped


def test_a_comma_ends_a_name_a_hyphen_splits_a_word_and_a_month_is_no_name() -> None:
    observation = (
        "Microsoft is in Redmond, Washington since 13 August 1961. It has 102-story towers."
    )
    names = allowed_answers(answer_rules([observation], question="Where is it?") or "")
    assert {"Redmond", "Washington"} <= names and "Redmond, Washington" not in names
    assert not [n for n in names if n.startswith("August")]
    numbers = allowed_answers(answer_rules([observation], question="How tall is it?") or "")
    assert {"102", "13 August 1961", "1961"} <= numbers and "102-story" not in numbers


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Who painted the Mona Lisa?", "name"),
        ("In which country is Petra?", "name"),
        ("What is the capital of Egypt?", "name"),
        ("How many provinces does Canada have?", "number"),
        ("On what date was the Statue of Liberty dedicated?", "number"),
        ("What is the area of the Sahara in square kilometres?", "number"),
        ("When did it end?", "number"),
        ("Describe it.", "any"),
    ],
)
def test_the_question_picks_the_answer_type(question: str, kind: str) -> None:
    assert answer_type(question) == kind


def test_with_no_run_of_the_question_type_there_is_no_finish_yet() -> None:
    assert answer_rules(["the cat sat on the mat."], question="Who sat?") is None
    assert answer_rules([], question="Who sat?") is None
    assert answer_rules([], question="Did it sit?") is None  # no yes/no before any evidence
    for observations in ([], ["the cat sat on the mat."]):
        text = step_grammar(require_thought=True, observations=observations, question="Who sat?")
        assert "Finish" not in text and '"Search[" title' in text
    # without extractive answers (other models' settings) Finish stays free
    assert "Finish[" in step_grammar(require_thought=True, question="Who sat?")


def test_the_step_grammar_uses_the_runs_and_forbids_searching_a_title_again() -> None:
    text = step_grammar(
        require_thought=True,
        observations=["Vienna is the capital of Austria."],
        question="Of which country is Vienna the capital?",
        not_answers=["Vien"],
        not_searches=["Vienna"],
    )
    rules = dict(line.split(" ::= ", 1) for line in text.splitlines())
    answer_lines = "\n".join(f"{k} ::= {v}" for k, v in rules.items() if k[:2] in ("an", "o0"))
    assert allowed_answers(answer_lines) == {"Austria"}
    assert '"Search[" title' in rules["action"]
    # a Search may not start with "vienna" again ("Vienna, Vienna" neither), "Vienn" may
    assert rules["title-0-0-0-0-0"] == '[^\\n\\[\\]aA] rest | ""'


def test_the_action_after_a_thought_answers_with_a_run_the_thought_names() -> None:
    observation = "Mount Fuji erupted in 1708. Its summit elevation is 3,776.24 m."
    question = "What is the summit elevation of Mount Fuji in metres?"
    text = answer_rules([observation], question=question, thought="The summit is 3,776.24 m.")
    assert text is not None and allowed_answers(text) == {"3,776.24"}
    # a thought naming no run leaves every run of the question's type
    text = answer_rules([observation], question=question, thought="I search Mount Fuji.")
    assert text is not None and allowed_answers(text) == {"1708", "3,776.24"}
    action = step_grammar(
        require_thought=True, part="action", observations=[observation], question=question
    )
    assert action.startswith("root ::= action\n")
