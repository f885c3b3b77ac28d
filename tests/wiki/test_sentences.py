"""The sentence splitter on tricky cases (the README reports its accuracy on this set)."""

from __future__ import annotations

import pytest

from wikireact.wiki.sentences import split_sentences

TRICKY = [
    (
        "U.S. president Richard Nixon resigned in 1974. Gerald Ford succeeded him.",
        ["U.S. president Richard Nixon resigned in 1974.", "Gerald Ford succeeded him."],
    ),
    (
        "The film was released by Warner Bros. Pictures in 2001. It was a hit.",
        ["The film was released by Warner Bros. Pictures in 2001.", "It was a hit."],
    ),
    (
        "Dr. Smith met the author. They spoke for hours.",
        ["Dr. Smith met the author.", "They spoke for hours."],
    ),
    (
        "The Hobbit was written by J. R. R. Tolkien. It appeared in 1937.",
        ["The Hobbit was written by J. R. R. Tolkien.", "It appeared in 1937."],
    ),
    (
        "The city has 3.5 million inhabitants. It is large.",
        ["The city has 3.5 million inhabitants.", "It is large."],
    ),
    (
        "Some fruits, e.g. apples, grow here. Others do not.",
        ["Some fruits, e.g. apples, grow here.", "Others do not."],
    ),
    (
        'He said "It is over. We lost." Then he left.',
        ['He said "It is over. We lost."', "Then he left."],
    ),
    ("北京是中国的首都。上海很大！你去过吗？", ["北京是中国的首都。", "上海很大！", "你去过吗？"]),
    (
        "== History ==\n\nThe town was founded in 1200. It grew.\n\n=== Later ===\nIt shrank.",
        ["The town was founded in 1200.", "It grew.", "It shrank."],
    ),
    (
        "Mr. Jones was born in St. Louis. He moved away.",
        ["Mr. Jones was born in St. Louis.", "He moved away."],
    ),
    ("It cost $4.99 at the time. Prices rose.", ["It cost $4.99 at the time.", "Prices rose."]),
    (
        "Ed Wood (born Oct. 10, 1924) was a filmmaker. He died in 1978.",
        ["Ed Wood (born Oct. 10, 1924) was a filmmaker.", "He died in 1978."],
    ),
    ("Is it true? Yes! It is.", ["Is it true?", "Yes!", "It is."]),
    ("The Ph.D. was awarded in 1990. She left.", ["The Ph.D. was awarded in 1990.", "She left."]),
    (
        "It lies 5 km north of the U.K. border. The road is old.",
        ["It lies 5 km north of the U.K. border.", "The road is old."],
    ),
]


@pytest.mark.parametrize(("text", "expected"), TRICKY)
def test_tricky_case(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_empty_text_has_no_sentences() -> None:
    assert split_sentences("\n\n== Heading ==\n   \n") == []
