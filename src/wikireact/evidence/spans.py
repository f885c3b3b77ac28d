"""Where an answer, or a phrase a Thought quotes, sits in a sentence (character offsets).

Matching uses HotpotQA's official answer normalisation (`normalize_answer`: lowercase, no
punctuation, no articles a/an/the, whitespace collapsed) token by token, so an answer is
found where the official evaluator would count it as equal, and the offsets point into the
sentence as shown. An answer the sentence joins to its neighbours by punctuation ("102" in
"a 102-story building", "907" in "(618–907)") is found among the word's pieces: the
normalisation would otherwise fuse it into one token ("102story") that no answer equals.
"""

from __future__ import annotations

import re
import string

from wikireact.protocols.scoring import normalize_answer

_WORD = re.compile(r"\S+")
_PIECE = re.compile(r"[^\s\-\u2010-\u2015/()\[\]{}]+")
"""A piece of a word that a hyphen, dash, slash or bracket joins to the next ("102-story",
"(618–907)"); never part of a number ("1" is no piece of "1,500", nor "3" of "3.5")."""
QUOTE_TOKENS = 3
"""Consecutive normalised tokens a Thought must share with a sentence to quote it."""
_STOPWORDS = frozenset(
    "and or but if so both are is was were be been being has have had do does did not no yes "
    "of in on at to for from by with as that this these those it its he she they them his her "
    "their who whom which what when where why how than then also same different both either "
    "neither same answer finish thought i we you need find search lookup".split()
)
Span = tuple[int, int]


def tokens(text: str, pattern: re.Pattern[str] = _WORD) -> list[tuple[str, int, int]]:
    """Return the normalised tokens of `text` with the character span of the word each came from.

    `pattern`: what a word is (default: a run without white space; `_PIECE`: letters or digits).
    """
    out = []
    for word in pattern.finditer(text):
        for token in normalize_answer(word.group()).split():
            out.append((token, word.start(), word.end()))
    return out


def _trimmed(text: str, start: int, end: int) -> Span:
    """Drop punctuation at the ends of a span (the word `York.` is cited as `York`)."""
    while start < end - 1 and text[start] in string.punctuation:
        start += 1
    while end > start + 1 and text[end - 1] in string.punctuation:
        end -= 1
    return start, end


def answer_span(sentence: str, answer: str) -> Span | None:
    """Return where the normalised `answer` occurs as whole tokens in `sentence`, or None.

    Words first (as the official normalisation splits them), then the pieces punctuation
    joins: "3,776.24" is found as a word, "102" in "102-story" as a piece.
    """
    for pattern in (_WORD, _PIECE):
        wanted = [t for t, _, _ in tokens(answer, pattern)]
        found = tokens(sentence, pattern)
        words = [t for t, _, _ in found]
        for i in range(len(words) - len(wanted) + 1 if wanted else 0):
            if words[i : i + len(wanted)] == wanted:
                return _trimmed(sentence, found[i][1], found[i + len(wanted) - 1][2])
    return None


def quoted_span(sentence: str, thought: str) -> Span | None:
    """Return the longest run of `QUOTE_TOKENS` or more tokens of `sentence` that `thought` repeats."""
    found = tokens(sentence)
    said = " " + " ".join(normalize_answer(thought).split()) + " "
    best: tuple[int, int] | None = None
    for i in range(len(found)):
        for j in range(len(found), i + QUOTE_TOKENS - 1, -1):
            if best is not None and j - i <= best[1] - best[0]:
                break
            if f" {' '.join(t for t, _, _ in found[i:j])} " in said:
                best = (i, j)
                break
    if best is None:
        return None
    return _trimmed(sentence, found[best[0]][1], found[best[1] - 1][2])


def named_span(sentence: str, thought: str, title: str | None) -> Span | None:
    """Return the first word of `sentence` that `thought` names (not a common word or the title's)."""
    own = set(normalize_answer(title or "").split())
    named = {t for t in normalize_answer(thought).split() if t not in _STOPWORDS and t not in own}
    for token, start, end in tokens(sentence):
        if token in named:
            return _trimmed(sentence, start, end)
    return None
