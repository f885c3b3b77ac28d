"""Extractive answers for a small model: a Finish argument copied out of the observations.

Gemma 3 270M often writes the answer in its thought ("the Observation says Prague is on the
Vltava River") and then finishes with something else: the question's subject, a near copy of
it ("Prache"), or an exemplar's answer ("Nairobi"). HotpotQA-style answers are spans of the
evidence (or yes/no), so under this grammar a Finish argument is a run of words copied from
an observation of the episode, with the original punctuation between them ("October 28,
1886", "3,776.24"), ending on a word:

- a run does not cross a sentence, bracket or quotation boundary;
- a name is whole: a run neither starts nor ends inside a sequence of capitalised words
  ("Herman Melville", "Miguel de Cervantes", "J. R. R. Tolkien"), the model otherwise
  stops after the first name;
- a run may not start like a title the episode searched, unless the question offers it as a
  choice ("Which is higher, Mount Kilimanjaro or Mont Blanc?");
- the question's type picks the runs: "how many", "what year", "when", measures -> runs
  starting with a number, a number word or a month; "who", "where", "in which ..." ->
  runs starting with a capitalised word; a yes/no question answers "yes" or "no" only
  (once a page was read), unless it asks to choose ("Was he from X or from Y?": also runs).
  While the observations hold no run of that type, there is no answer (the grammar then
  offers no Finish: the model searches on).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

AnswerType = Literal["number", "name", "any"]

_WORD = re.compile(r"\w+(?:['’.,]\w+)*")
r"""A word keeps inner apostrophes, dots and commas (3,776.24, Jupiter's); a hyphen is a gap
(102-story: the run may stop at 102). Not possessive (`\w++...*+`): CPython 3.11.2 then
matched `Melville.` with the sentence's dot (tests/package/test_regex_portability.py)."""
_BREAK = re.compile(r"[.;:!?()\[\]\"'‘’“”«»\n]")
"""Text between two words that ends a run of words (a sentence, a bracket, a quotation)."""
_NAME_JOINERS = frozenset({"da", "de", "del", "della", "der", "di", "du", "la", "le", "van", "von"})
"""Lower-case words inside a name: Leonardo da Vinci, Vincent van Gogh, Miguel de Cervantes."""
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand million billion dozen january february march april may june july august "
    "september october november december".split()
)
_ARTICLES = frozenset({"the", "a", "an"})
_OPENERS = _ARTICLES | frozenset(
    "it its he his she her they their this that these those there in on at of by for from "
    "with as after before during since its".split()
)
"""Capitalised words that open a sentence, not a name ("The capital ...", "Its capital ...")."""
_YES_NO = re.compile(
    r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.IGNORECASE
)
_EITHER_OR = re.compile(r"\bor\b", re.IGNORECASE)
"""A question opening like a yes/no one that asks to choose ("Is X or Y older?")."""
_CHOICES = re.compile(r",\s*([^,]+?)\s+or\s+([^,?]+)\??$", re.IGNORECASE)
"""The alternatives a comparison offers after its last comma ("Which is older, X or Y?")."""
_NUMBER_QUESTION = re.compile(
    r"^(when\b|(in |on )?(what|which) (year|date|decade|century)\b)|\bhow (many|much|long|tall"
    r"|high|far|old|deep|wide|big|large)\b|\b(area|population|elevation|distance|height|length"
    r"|depth|width|orbital period)\b",
    re.IGNORECASE,
)
_NAME_QUESTION = re.compile(r"^(who|whom|whose|where)\b|\b(which|what) [a-z]+\b", re.IGNORECASE)


def is_yes_no_question(question: str) -> bool:
    """Whether `question` is answered by yes or no (it opens with an auxiliary verb)."""
    return _YES_NO.match(question.strip()) is not None


def offered_choices(question: str) -> tuple[str, ...]:
    """Return the alternatives `question` asks to choose from ("Which is older, X or Y?": X, Y)."""
    found = _CHOICES.search(question.strip())
    return found.groups() if found else ()


def answer_type(question: str) -> AnswerType:
    """Return what kind of run answers `question`: a number, a name, or any."""
    if _NUMBER_QUESTION.search(question):
        return "number"
    return "name" if _NAME_QUESTION.search(question.strip()) else "any"


def answer_rules(
    observations: Sequence[str],
    not_starting: Iterable[str] = (),
    *,
    question: str = "",
    thought: str = "",
    kind: AnswerType | None = None,
    names_only: bool = False,
) -> str | None:
    """Return GBNF rules for `answer`: a run of words from `observations` that fits `question`.

    A run may not start with any of `not_starting` (compared case-insensitively). When the
    step's `thought` names some of the runs (their first word, articles aside), only those
    may start the answer: the Finish follows the model's own reasoning (a word of the
    question names nothing: "Hubble" in "Hubble Space Telescope is named after Edwin
    Hubble" does not name "The Hubble Space Telescope"). Returns None when no run is
    possible (no observation yet, or none of the question's type): then there is nothing
    to answer with yet. `kind` overrides the type the question asks for; with `names_only`
    a run is one whole name ("Prague", "Leonardo da Vinci"), never a sentence opening with
    one ("The capital and largest city is Prague").
    """
    blocked = tuple(p.lower() for p in not_starting if p.strip())
    kind = kind or answer_type(question)
    offered = {w.lower() for choice in offered_choices(question) for w in _WORD.findall(choice)}
    asked = {w.lower() for w in _WORD.findall(question)} - offered  # a choice may be named
    thought_words = {w.lower() for w in _WORD.findall(thought)} - asked
    rules: list[str] = []
    starts: list[str] = []
    named: list[str] = []
    for number, text in enumerate(dict.fromkeys(observations)):
        found = list(_WORD.finditer(text))
        words = [w.group() for w in found]
        gaps = [text[found[i].end() : found[i + 1].start()] for i in range(len(found) - 1)]
        joined = _name_links(words, gaps)
        run_gaps = [g if joined[i] else "." for i, g in enumerate(gaps)] if names_only else gaps
        for index, word in enumerate(words):  # with names_only a run ends where its name ends
            rules.append(_chain_rule(f"o{number}w", words, run_gaps, joined, index, numeric=False))
            if _is_number(word):
                rules.append(_chain_rule(f"o{number}n", words, gaps, joined, index, numeric=True))
            if (index and joined[index - 1]) or text[found[index].start() :].lower().startswith(
                blocked
            ):
                continue  # inside a name, or like a searched title
            if kind == "number" and not _is_number(word):
                continue
            if kind == "name" and not (word[0].isupper() and word.lower() not in _NUMBER_WORDS):
                continue  # a name: capitalised, and not a month
            if names_only and word.lower() in _OPENERS:
                continue
            start = f"o{number}{'n' if kind == 'number' else 'w'}{index}"
            starts.append(start)
            if _named(words, index, thought_words):
                named.append(start)
    chosen = named or starts
    if rules and is_yes_no_question(question):
        if not _EITHER_OR.search(question):
            return 'answer ::= "yes" | "no"\n'
        chosen = ['"yes"', '"no"', *chosen]
    if not chosen:
        return None
    return "\n".join([f"answer ::= {' | '.join(chosen)}", *rules]) + "\n"


def _chain_rule(
    prefix: str, words: list[str], gaps: list[str], joined: list[bool], index: int, *, numeric: bool
) -> str:
    """Return the rule for word `index` of a run: the word, then whether and how it goes on.

    Inside a name the run must go on; over a sentence, bracket or quotation boundary it
    cannot; after a comma only into a number (dates: October 28, 1886). A numeric run
    (`numeric`) goes on only into number words, months and numbers (13 August 1961, not
    "26 states").
    """
    head = f"{prefix}{index} ::= {gbnf_literal(words[index])}"
    if index >= len(gaps):
        return head
    gap, after = gaps[index], words[index + 1]
    may_go_on = _links(words, gaps, index) or not _BREAK.search(gap)
    if "," in gap and not after[0].isdigit():
        may_go_on = False
    if numeric and not _is_number(after):
        may_go_on = False
    if not may_go_on:
        return head
    step = f"{gbnf_literal(gap)} {prefix}{index + 1}"
    return f"{head} {step}" if joined[index] and not numeric else f"{head} ({step})?"


def _is_number(word: str) -> bool:
    """Whether `word` is a number, a number word or a month."""
    return word[0].isdigit() or word.lower() in _NUMBER_WORDS


def _named(words: list[str], index: int, thought_words: set[str]) -> bool:
    """Whether the run starting at word `index` is named in the thought (by its first real word)."""
    for word in words[index : index + 2]:
        if word.lower() not in _ARTICLES:
            return word.lower() in thought_words
    return False


def _links(words: list[str], gaps: list[str], index: int) -> bool:
    """Whether the gap after word `index` may sit inside a name: a space, or `. ` after an initial."""
    gap = gaps[index]
    return gap == " " or (gap == ". " and len(words[index]) == 1 and words[index].isupper())


def _name_links(words: list[str], gaps: list[str]) -> list[bool]:
    """For each gap, whether the words on both sides belong to one name (no run splits them)."""
    joined: list[bool] = []
    for index in range(len(gaps)):
        here, after = words[index], words[index + 1]
        inside = here[0].isupper() or (here in _NAME_JOINERS and index > 0 and joined[index - 1])
        joiner_then_name = (
            after in _NAME_JOINERS
            and index + 2 < len(words)
            and _links(words, gaps, index + 1)
            and words[index + 2][0].isupper()
        )
        joined.append(
            inside and _links(words, gaps, index) and (after[0].isupper() or joiner_then_name)
        )
    return joined


def gbnf_literal(text: str) -> str:
    """Return `text` as a GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
