"""The shape of a small model's ReWOO plan, read from the question: which pages, in which order.

Gemma 3 270M cannot plan two hops: asked for a plan it searches one word of the question
("Capital") and repeats that step until the budget ends. Its plan is therefore decoded in a
shape chosen from the question's form alone (never from an answer), with only the titles the
question names (`question_titles`) as the first Search's input:

- `comparison` (it offers a choice, "Which is older, X or Y?", or asks yes/no about two
  titles, "Were X and Y both ...?"): `#E1 = Search[X]`, `#E2 = Search[Y]`, Y another title;
- `bridge` (it asks about an entity it only describes, "the capital of X", "the author of
  X", "the city where X stands"): `#E1 = Search[X]`, `#E2 = LLM[... #E1]` (the entity,
  copied from #E1's page: `wikireact.models.local.answer_spans`), `#E3 = Search[#E2]`;
- `single` (anything else, "Who wrote X?"): `#E1 = Search[X]`.
A question that names no title gets no shape (the plan grammar of any length applies).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from wikireact.models.local.answer_spans import is_yes_no_question, offered_choices

PlanShape = Literal["single", "bridge", "comparison"]
MAX_TITLE_WORDS = 8
"""The longest run of question words tried as a title."""
_TOKEN = re.compile(r"\S+")
_EDGE = '?!.,;:"“”‘’()'
_JOINERS = frozenset({"of", "the", "and", "de", "da", "van", "von", "del", "di", "du", "la", "le"})
"""Lower-case words a title may hold between its capitalised ones (without a title index)."""
_RELATION = re.compile(
    r"\bthe (?:[a-z]+ ){0,2}[a-z]+(?:'s [a-z]+)? (?:of|in which|on which|into which|where"
    r"|(?:who|that) [a-z]+)(?: the)? [A-Z0-9]"
    r"|\bthe [a-z]+ the [A-Z]"
)
"""An entity the question describes by a relation to a named one ("the capital of Poland",
"the city where the Taj Mahal stands", "the engineer the Eiffel Tower is named after")."""
_NESTED = re.compile(
    r"\bthe (?:[a-z]+ ){0,2}[a-z]+ of the (?:[a-z]+ ){0,2}[a-z]+ (?:of|in which|on which|into which"
    r"|where|(?:who|that) [a-z]+)\b"
)
"""A relation whose object is itself described ("the father of the author of X"): two hops."""
_CONNECTORS = frozenset({"the", "of", "in", "on", "into", "which", "where", "who", "that", "s"})
_ASKS_RELATION = re.compile(r"^(what|who|which) (is|was|are|were) the ", re.IGNORECASE)
"""A question whose whole object is one relation ("What is the capital of Brazil?"): one hop."""


@dataclass(frozen=True)
class QuestionPlan:
    """The plan's shape, the titles the question names, and those its first Search may open."""

    shape: PlanShape
    titles: tuple[str, ...]
    first: tuple[str, ...]
    """A bridge opens the page the relation starts from ("the capital of X": X); else any title."""


def question_titles(question: str, is_title: Callable[[str], bool] | None) -> tuple[str, ...]:
    """Return the titles `question` names, in the order it names them.

    With `is_title` (a snapshot's titles), every run of up to `MAX_TITLE_WORDS` words that
    starts with a capital or a digit (not the question's opening word) and is a title; a run
    inside a longer one is dropped. Without it, the runs of capitalised words (with joiners
    such as "of", "the", "da" inside).
    """
    words = [(m.start(), m.group()) for m in _TOKEN.finditer(question)]
    spans: list[tuple[int, int, str]] = []
    for i in range(1, len(words)):
        first = words[i][1].lstrip(_EDGE)
        if not first or not (first[0].isupper() or first[0].isdigit()):
            continue
        for j in range(min(len(words), i + MAX_TITLE_WORDS), i, -1):
            inner = [w for _, w in words[i : j - 1]]
            if any(w.endswith((",", "?", ";", ":")) for w in inner):
                continue  # a title does not cross a comma
            text = " ".join(w for _, w in words[i:j]).strip(_EDGE)
            text = text[:-2] if text.endswith(("'s", "’s")) else text
            if not text:
                continue
            if is_title is None:
                found = text if _capitalised_run(text, j - i) else None
            else:  # "the Starry Night" names "The Starry Night"
                named = (text, f"The {text}") if words[i - 1][1] == "the" else (text,)
                found = next((t for t in named if is_title(t)), None)
            if found:
                spans.append((i, j, found))
                break
    kept = [s for s in spans if not any(o[0] <= s[0] and s[1] <= o[1] and o != s for o in spans)]
    return tuple(dict.fromkeys(text for _, _, text in kept))


def question_plan(
    question: str, is_title: Callable[[str], bool] | None = None
) -> QuestionPlan | None:
    """Return the plan's shape for `question` (None: it names no title)."""
    titles = question_titles(question, is_title)
    if not titles:
        return None
    choosing = bool(offered_choices(question)) or is_yes_no_question(question)
    if choosing and len(titles) >= 2:
        return QuestionPlan("comparison", titles, titles)
    relations = list(_RELATION.finditer(question))
    one_hop = len(relations) == 1 and _ASKS_RELATION.match(question) is not None
    if relations and (_NESTED.search(question) or not one_hop):
        objects = {m.end() - 1 for m in relations}
        first = tuple(t for t in titles if _named_at(question, t) & objects)
        return QuestionPlan("bridge", titles, first or titles)
    return QuestionPlan("single", titles, titles)


def relation_words(question: str) -> set[str]:
    """Return the stems of the words that describe the entity a question asks about.

    "the capital of Poland": capital; "the emperor who commissioned the Taj Mahal": emperor,
    commissioned (their first five letters); none when the question describes none.
    """
    words = {w for m in _RELATION.finditer(question) for w in re.findall(r"[a-z]+", m.group())}
    return {w[:5] for w in words - _CONNECTORS}


def _named_at(question: str, title: str) -> set[int]:
    """Return where `question` names `title`: its first word, or the one after a leading "The"."""
    at = question.lower().find(title.lower())
    if at == -1:
        return set()
    return {at, at + 4} if title.lower().startswith("the ") else {at}


def _capitalised_run(text: str, length: int) -> bool:
    """Whether `text` (`length` words) is capitalised words with joiners only inside."""
    words = text.split()
    if len(words) != length or words[-1].lower() in _JOINERS:
        return False
    return all(w[0].isupper() or w[0].isdigit() or w in _JOINERS for w in words)


def hop_question(question: str, plan: QuestionPlan, entity: str) -> str:
    """Return a bridge `question` with the entity it describes named: its second hop.

    "On which river does the capital of the Czech Republic stand?" with "Prague" becomes
    "On which river does Prague stand?": the relation and the title it starts from are
    replaced (the question unchanged when no relation names one of `plan.first`).
    """
    for relation in _RELATION.finditer(question):
        for title in plan.first:
            at = question.find(title, relation.end() - 1)
            if at == relation.end() - 1 and entity.strip():
                return question[: relation.start()] + entity.strip() + question[at + len(title) :]
    return question
