"""ReAct episodes return the sentences their answer rests on, and `verify_finish` sends back an unseen answer."""

from __future__ import annotations

from typing import Any

import pytest
from support import CLAIM, FEVER_PAGES, GOOD_RUN, PAGES, QUESTION, TOOLS_RUN

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.episode.stored_context import settle
from wikireact.evidence import cite
from wikireact.evidence.verify import UNVERIFIED
from wikireact.models.scripted import ScriptOutput

LONG_PAGES = {
    "Ed Wood": PAGES["Ed Wood"] + " He directed Plan 9. He wrote novels. His wife was Kathy O'Hara."
}
"""Ed Wood with eight sentences: the last ones only a Lookup shows."""


def run(
    outputs: list[ScriptOutput],
    question: str = "Where was Ed Wood born?",
    pages: dict[str, str] | None = None,
    **context: Any,
) -> dict[str, Any]:
    pages = pages or (FEVER_PAGES if context.get("task") == "fever" else PAGES)
    graph = build_graph(model=ScriptedChatModel(outputs=outputs), wiki=MemorySource(pages))
    context.setdefault("verify_finish", True)
    return dict(graph.invoke({"question": question}, context=Context(**context)))


def spans(out: dict[str, Any]) -> list[tuple[int, str | None, int | None, str]]:
    """Each citation as (step, title, sentence index, the cited span's text)."""
    return [
        (c["step"], c["title"], c["sentence_index"], c["sentence"][c["start"] : c["end"]])
        for c in out["citations"]
    ]


def test_an_answer_in_a_search_result_cites_its_sentence() -> None:
    out = run(
        [
            "Thought 1: Find him.\nAction 1: Search[Ed Wood]",
            "Thought 2: It says so.\nAction 2: Finish[october 10 1924]",
        ],
        "When was Ed Wood born?",
    )
    assert out["supported"] is True
    assert spans(out) == [(1, "Ed Wood", 0, "October 10, 1924")]


def test_an_answer_in_a_lookup_result_cites_the_page_sentence_index() -> None:
    out = run(
        [
            "Thought 1: Find him.\nAction 1: Search[Ed Wood]",
            "Thought 2: His wife?\nAction 2: Lookup[wife]",
            "Thought 3: There.\nAction 3: Finish[Kathy O'Hara]",
        ],
        "Who was Ed Wood's wife?",
        LONG_PAGES,
    )
    assert out["supported"] is True
    assert spans(out) == [(2, "Ed Wood", 7, "Kathy O'Hara")]
    assert out["trajectory"][1]["shown"] == [
        {"title": "Ed Wood", "sentence_index": 7, "sentence": "His wife was Kathy O'Hara."}
    ]


def test_verify_finish_sends_an_unseen_answer_back_once_then_ends_unsupported() -> None:
    out = run(
        [
            "Thought 1: Find him.\nAction 1: Search[Ed Wood]",
            "Thought 2: I recall Chicago.\nAction 2: Finish[Chicago]",
            "Thought 3: No, Boston.\nAction 3: Finish[Boston]",
            "Thought 4: I keep it.\nAction 4: Finish[boston]",
        ]
    )
    kinds = [s["kind"] for s in out["trajectory"]]
    assert kinds == ["executed", "unverified", "unverified", "finish"]
    assert out["trajectory"][1]["observation"] == UNVERIFIED.format(answer="Chicago")
    assert out["trajectory"][1]["observation"].startswith(
        "Finish[Chicago]: Chicago appears in no observation so far. Look it up, or Finish again"
    )
    assert (out["status"], out["answer"], out["steps"]) == ("finished", "boston", 4)
    assert out["supported"] is False and out["citations"] == []


def test_verify_finish_counts_against_the_budget() -> None:
    out = run(
        [
            "Thought 1: Find him.\nAction 1: Search[Ed Wood]",
            "Thought 2: I recall Chicago.\nAction 2: Finish[Chicago]",
        ],
        max_steps=2,
    )
    assert (out["status"], out["answer"], out["supported"]) == ("budget_exhausted", None, False)


def test_without_verify_finish_an_unseen_answer_ends_at_once_unsupported() -> None:
    out = run(
        [
            "Thought 1: Find him.\nAction 1: Search[Ed Wood]",
            "Thought 2: I recall Chicago.\nAction 2: Finish[Chicago]",
        ],
        verify_finish=False,
    )
    assert (out["status"], out["steps"], out["supported"]) == ("finished", 2, False)


def test_model_text_and_a_made_up_observation_are_not_evidence() -> None:
    out = run(
        [
            "Thought 1: Find him.\nAction 1: Search[Ed Wood]\n"
            "Observation 1: Ed Wood was born in Chicago, Illinois.",
            "Thought 2: Wood was born in Chicago, Illinois.\nAction 2: Finish[Chicago, Illinois]",
        ],
        verify_finish=False,
    )
    assert "Chicago" not in out["trajectory"][0]["observation"]
    assert out["citations"] == [] and out["supported"] is False


def test_a_yes_no_comparison_cites_both_pages() -> None:
    out = run(GOOD_RUN, QUESTION)
    assert out["supported"] is True
    assert spans(out) == [(1, "Scott Derrickson", 0, "American"), (2, "Ed Wood", 0, "American")]


def test_a_yes_no_answer_naming_nothing_shown_is_unsupported() -> None:
    out = run(
        [
            "Thought 1: Look.\nAction 1: Search[Scott Derrickson]",
            "Thought 2: I guess so.\nAction 2: Finish[yes]",
        ],
        QUESTION,
    )
    assert out["citations"] == [] and out["supported"] is False


def test_a_fever_label_cites_the_sentence_its_thought_quotes() -> None:
    out = run(
        [
            "Thought 1: I search him.\nAction 1: Search[Nikolaj Coster-Waldau]",
            "Thought 2: He appeared in the 2009 Fox television film Virtuality, so he worked "
            "with Fox.\nAction 2: Finish[SUPPORTS]",
        ],
        CLAIM,
        task="fever",
    )
    assert out["answer"] == "SUPPORTS" and out["supported"] is True
    assert spans(out) == [
        (1, "Nikolaj Coster-Waldau", 3, "He appeared in the 2009 Fox television film Virtuality")
    ]


def test_the_tools_protocol_gets_the_same_check_as_a_tool_result() -> None:
    finish = {"tool": "finish", "args": {"answer": "Chicago"}, "content": "Chicago."}
    out = run([TOOLS_RUN[1], finish, finish], protocol="tools")
    assert [s["kind"] for s in out["trajectory"]] == ["executed", "unverified", "finish"]
    assert out["trajectory"][1]["observation"] == UNVERIFIED.format(answer="Chicago")
    assert out["supported"] is False


def test_steps_recorded_before_sentences_were_kept_still_give_evidence() -> None:
    old = [
        {
            "kind": "executed",
            "action": "Search[Ed Wood]",
            "thought": "",
            "observation": "Ed Wood was an actor. He was born in Poughkeepsie.",
        },
        {
            "kind": "executed",
            "action": "Search[Chicago]",
            "thought": "",
            "observation": "Could not find Chicago. Similar: ['Poughkeepsie'].",
        },
        {"kind": "finish", "action": "Finish[Poughkeepsie]", "thought": "", "observation": ""},
    ]
    (citation,) = cite(old, "Poughkeepsie")
    assert (citation["step"], citation["title"], citation["sentence_index"]) == (1, None, None)
    assert citation["sentence"] == "He was born in Poughkeepsie."


def test_verify_finish_is_on_by_default_and_off_for_episodes_begun_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("WIKIREACT_VERIFY_FINISH")
    assert Context().verify_finish is True
    stored = {k: v for k, v in Context().as_dict().items() if k != "verify_finish"}
    assert settle(stored, None).verify_finish is False


@pytest.mark.parametrize(
    ("sentence", "answer", "cited"),
    [
        ("The Empire State Building is a 102-story skyscraper.", "102", "102"),
        ("It lasted from 755 to 763, under the Tang dynasty (618–907).", "907", "907"),
        ("Mount Fuji is 3,776.24 m high.", "3,776.24", "3,776.24"),
        ("The Empire State Building is a 102-story skyscraper.", "102-story", "102-story"),
    ],
)
def test_an_answer_joined_to_its_neighbours_by_punctuation_is_seen_and_cited(
    sentence: str, answer: str, cited: str
) -> None:
    """Found with the embedded model: `Finish[102]` out of "a 102-story" was sent back as unseen."""
    out = run(
        [
            "Thought 1: Find it.\nAction 1: Search[Page]",
            f"Thought 2: It says so.\nAction 2: Finish[{answer}]",
        ],
        "How many?",
        {"Page": sentence},
    )
    assert [s["kind"] for s in out["trajectory"]] == ["executed", "finish"]
    assert out["supported"] is True
    assert spans(out) == [(1, "Page", 0, cited)]


def test_a_number_is_not_found_inside_a_longer_number() -> None:
    """ "1" is no piece of "1,500" (digit separators join one number; dashes join two words)."""
    out = run(
        [
            "Thought 1: Find it.\nAction 1: Search[Page]",
            "Thought 2: It says so.\nAction 2: Finish[1]",
            "Thought 3: I keep it.\nAction 3: Finish[1]",
        ],
        "How many?",
        {"Page": "The town had 1,500 residents and a 3.5 km runway."},
    )
    assert [s["kind"] for s in out["trajectory"]] == ["executed", "unverified", "finish"]
    assert out["supported"] is False and out["citations"] == []
