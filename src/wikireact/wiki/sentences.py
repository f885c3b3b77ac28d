"""Split page text into sentences.

Uses `sentencex`, the Wikimedia Foundation's rule-based segmenter for ~300 languages:
it keeps abbreviations ("U.S. president", "Warner Bros. Pictures", "Dr.", "e.g."),
initials ("J. R. R. Tolkien"), decimals and quoted sentences intact, splits Chinese on
。！？, and segments a 500-sentence page in about a millisecond (pysbd split
"Warner Bros. Pictures" and took ~1.4 s for the same page; nupunkt split quotations).
"""

from __future__ import annotations

import re

from sentencex import segment

_HEADING = re.compile(r"^\s*=+.*=+\s*$")


def split_sentences(text: str, language: str = "en") -> list[str]:
    """Return the sentences of `text`, dropping section headings and empty lines."""
    sentences: list[str] = []
    for line in text.splitlines():
        if not line.strip() or _HEADING.match(line):
            continue
        for sentence in segment(language, line):
            cleaned = " ".join(sentence.split())
            if cleaned:
                sentences.append(cleaned)
    return sentences
