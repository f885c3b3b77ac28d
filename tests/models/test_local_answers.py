"""What the local model may answer: page text only, and only yes or no to a yes/no question.

Episodes run through the graph with the local model over a stand-in for llama.cpp that
records the grammar of every call; the allowed Finish arguments are read off the last one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import pytest
from support import PAGES
from test_answer_spans import allowed_answers
from test_small_model_prompt import _FakeLlama

from wikireact import Context, MemorySource, build_graph
from wikireact.eval.scoring import is_yes_no
from wikireact.models.local import llama as local_model
from wikireact.models.local.page_text import page_text
from wikireact.models.local.step_form import step_form
from wikireact.models.local.step_grammar import step_grammar
from wikireact.prompting import small_model as small_model_prompt
from wikireact.state import Step

SHIPPED_SETS = sorted((Path(__file__).resolve().parents[1] / "data").glob("*.json"))
_ANSWER_RULE = re.compile(r"^(answer|o\d+[wn]\d+) ::= ")
"""The lines of a step grammar that spell a Finish argument (`answer_spans.answer_rules`)."""
PAGE_TEXT = (
    "Edward Davis Wood Jr. was an American filmmaker from New York, born in 1924. He made 12 films."
)


def _answers(grammar: str) -> set[str]:
    """The Finish arguments a step grammar allows (none when it offers no Finish)."""
    rules = [line for line in grammar.splitlines() if _ANSWER_RULE.match(line)]
    return allowed_answers("\n".join(rules)) if rules else set()


def _answers_of_last_call(fake: _FakeLlama) -> set[str]:
    """The Finish arguments the grammar of the model's last call allowed."""
    return _answers(str(fake.calls[-1][1]))


def _episode(
    monkeypatch: Any, method: Literal["react", "act"], question: str, replies: list[str]
) -> _FakeLlama:
    """Run one episode of the local model (over `PAGES`) whose calls reply `replies`."""
    monkeypatch.setattr(
        local_model, "_constraint", lambda client, grammar, t, titles=None: {"grammar": grammar}
    )
    monkeypatch.setattr(local_model, "_chat_prompt", lambda turns: "PROMPT|")
    fake = _FakeLlama(replies)
    model = local_model.LlamaCppChatModel(model_path="unused.gguf")
    model._llama = fake
    graph = build_graph(model=model, wiki=MemorySource(PAGES))
    graph.invoke({"question": question}, context=Context(max_steps=4, method=method))
    assert len(fake.calls) == len(replies)
    return fake


def _steps(method: Literal["react", "act"], *steps: tuple[str, str]) -> list[str]:
    """The replies of the local model's calls: ReAct writes a thought, then the action."""
    replies: list[str] = []
    for number, (thought, action) in enumerate(steps, 1):
        if method == "react":
            replies += [f"Thought {number}: {thought}\n", f"Action {number}: {action}"]
        else:
            replies.append(f"Action {number}: {action}")
    return replies


@pytest.mark.parametrize("method", ["react", "act"])
def test_a_finish_copies_page_text_never_the_environments_own_messages(
    monkeypatch: Any, method: Literal["react", "act"]
) -> None:
    replies = _steps(
        method,
        ("I search Ed Wood.", "Search[Ed Wood]"),
        ("I search S.", "Search[S]"),
        ("The Observation says S. Similar.", "Finish[S. Similar]"),
    )
    fake = _episode(monkeypatch, method, "Who made the films of Ed Wood?", replies)
    answers = _answers_of_last_call(fake)
    assert "Edward Davis Wood Jr" in answers
    said = " ".join(PAGES["Ed Wood"].split())
    # nothing out of "Could not find S. Similar: []." nor any word not on the page
    assert not [a for a in answers if a not in said], sorted(a for a in answers if a not in said)


@pytest.mark.parametrize("method", ["react", "act"])
def test_a_yes_no_question_is_answered_yes_or_no_only(
    monkeypatch: Any, method: Literal["react", "act"]
) -> None:
    replies = _steps(
        method,
        ("I search Ed Wood.", "Search[Ed Wood]"),
        ("The Observation says Ed Wood was American.", "Finish[yes]"),
    )
    question = "Were Scott Derrickson and Ed Wood of the same nationality?"
    assert _answers_of_last_call(_episode(monkeypatch, method, question, replies)) == {"yes", "no"}


def _allowed(question: str) -> set[str]:
    """The Finish arguments allowed after one page of `PAGE_TEXT` (an Act step)."""
    from wikireact.models.local.llama import _to_gemma_turns

    read = Step(
        kind="executed", thought="", action="Search[Ed Wood]", observation=PAGE_TEXT, raw=""
    )
    turns = _to_gemma_turns(small_model_prompt.build_messages(question, [read], "act"))
    form = step_form(
        turns,
        no_title_answers=False,
        extractive_answers=True,
        no_repeated_searches=False,
        observation_opening=False,
    )
    return _answers(step_grammar(**form))


@pytest.mark.parametrize("path", SHIPPED_SETS, ids=lambda path: path.name)
def test_every_shipped_question_gets_yes_no_answers_exactly_when_its_gold_answer_is(
    path: Path,
) -> None:
    wrong = []
    for row in json.loads(path.read_text(encoding="utf-8")):
        allowed = _allowed(row["question"])
        if is_yes_no(row["answer"]) != (allowed == {"yes", "no"}) or not allowed:
            wrong.append((row["question"], row["answer"], sorted(allowed)[:4]))
    assert not wrong


def test_an_either_or_question_opening_like_a_yes_no_one_answers_with_a_name() -> None:
    allowed = _allowed("Was Ed Wood from New York or from Denver?")
    assert "New York" in allowed


def test_page_text_is_what_search_and_lookup_show_and_no_message_is() -> None:
    from wikireact.episode.approval import read_decision
    from wikireact.nodes.observe import _observation
    from wikireact.prompting.fitting import cleared_observation
    from wikireact.protocols.text import Action, parse_action
    from wikireact.wiki.environment import lookup, search, truncate

    source = MemorySource({**PAGES, "Blank": ""}, disambiguations={"Wood": ["Ed Wood", "Wood"]})
    opened = search(source, "Ed Wood")
    found = lookup(opened.sentences, {}, "Poughkeepsie")
    assert page_text(opened.observation) == opened.observation
    assert page_text(found.observation) == "Wood was born in Poughkeepsie, New York."
    cut = truncate(opened.observation, 60)
    assert "truncated" in cut and opened.observation.startswith(page_text(cut))
    read = Step(kind="executed", thought="", action="Search[Ed Wood]", observation="", raw="")
    repeat = Step(
        kind="repeat", thought="", action="Search[Ed Wood]", observation="(a repeat)", raw=""
    )
    shown = small_model_prompt.build_messages(
        "Q?", [Step(**{**read, "observation": opened.observation}), repeat], "act"
    )
    assert page_text(str(shown[-1].content).split("«")[1].split("»")[0]) == opened.observation
    action = parse_action("Search[Ed Wood]")
    assert isinstance(action, Action)
    state: Any = {"page_title": "Ed Wood", "page_key": "k"}
    messages = [
        search(source, "S").observation,
        search(source, "Wood").observation,
        search(source, "Blank").observation,
        lookup([], {}, "x").observation,
        lookup(opened.sentences, {"poughkeepsie": 1}, "Poughkeepsie").observation,
        _observation("invalid", {"format_error": "no Action line"}, state),
        _observation("invalid", {}, state),
        _observation("repeat", {"action_text": "Search[Ed Wood]", "repeat_of": 1}, state),
        _observation(
            "repeat",
            {"action": {"name": "Search", "argument": "Ed Wood"}, "state_key": "k", "repeat_of": 1},
            state,
        ),
        read_decision(action, {"reject": "off topic"}).observation,
        read_decision(action, "maybe").observation,
        read_decision(action, {"action": "Dance[x]"}).observation,
        cleared_observation(Step(**{**read, "observation": opened.observation})),
    ]
    assert [m for m in messages if page_text(m)] == []


@pytest.mark.parametrize(
    ("question", "offered"),
    [
        ("Which director was born earlier, Scott Derrickson or Ed Wood?", True),
        ("Who was born earlier, Ed Wood or Scott Derrickson?", True),
        ("Which is older, the one who directed Sinister or Ed Wood?", False),
    ],
)
def test_a_finish_may_name_a_searched_title_the_question_offers_as_a_choice(
    monkeypatch: Any, question: str, offered: bool
) -> None:
    replies = _steps(
        "react",
        ("I search Scott Derrickson.", "Search[Scott Derrickson]"),
        ("I search Ed Wood.", "Search[Ed Wood]"),
        ("The Observation says Scott Derrickson was born in 1966.", "Finish[Scott Derrickson]"),
    )
    answers = _answers_of_last_call(_episode(monkeypatch, "react", question, replies))
    # offered: the title the thought names (words of the question's choices name runs too)
    assert ("Scott Derrickson" in answers) is offered
