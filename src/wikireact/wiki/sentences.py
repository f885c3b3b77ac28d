"""Split page text into sentences.

Uses `sentencex`, the Wikimedia Foundation's rule-based segmenter for ~300 languages:
it keeps abbreviations ("U.S. president", "Warner Bros. Pictures", "Dr.", "e.g."),
initials ("J. R. R. Tolkien"), decimals and quoted sentences intact, splits Chinese on
。！？, and segments a 500-sentence page in about a millisecond (pysbd split
"Warner Bros. Pictures" and took ~1.4 s for the same page; nupunkt split quotations).
"""

from __future__ import annotations

from sentencex import segment


def split_sentences(text: str, language: str = "en") -> list[str]:
    """Return the sentences of `text`, dropping section headings and empty lines."""
    sentences: list[str] = []
    for line in text.splitlines():
        if not line.strip() or _is_heading(line):
            continue
        for sentence in segment(language, line):
            cleaned = " ".join(sentence.split())
            if cleaned:
                sentences.append(cleaned)
    return sentences


def _is_heading(line: str) -> bool:
    r"""Whether `line` is a section heading such as `== History ==`.

    Same as matching `^\s*=+.*=+\s*$`, without the regex: on a line of a thousand `=`
    signs it backtracked for 15 seconds.
    """
    stripped = line.strip()
    return len(stripped) >= 2 and stripped[0] == "=" and stripped[-1] == "="
