"""The citations of a final answer: the shown sentences it rests on, and whether it is supported.

Only what the environment showed counts: the sentences recorded beside each executed
Search/Lookup (`shown`), or, for steps recorded before those were kept, the sentences of
the observation text (title and index then unknown). Model text (thoughts, a made-up
`Observation` line, ReWOO's LLM steps) never counts.

- A short answer cites every shown sentence containing it (official HotpotQA normalisation);
  it is supported when one does.
- A yes/no answer or a FEVER label cites the sentences the last Thought quotes
  (`spans.QUOTE_TOKENS` words or more) and, for each page of the comparison (a shown page the
  question or the Thought names), the first sentence naming a word of the Thought. It is
  supported when every such page has a citation (at least one in all). `NOT ENOUGH INFO`
  rests on an absence: it is supported once any page was read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from wikireact.evidence.spans import Span, answer_span, named_span, quoted_span
from wikireact.protocols.citations import Citation, ShownSentence
from wikireact.protocols.labels import normalize_label
from wikireact.protocols.scoring import is_yes_no

_RESULT_PREFIX = re.compile(r"^\(Result \d+ / \d+\) ")
_NOT_A_PAGE = ("Could not find ", "No page is open", "No more results.", "The page ")
_DISAMBIGUATION = " may refer to several pages. Similar: "


def answer_evidence(
    trajectory: Sequence[Mapping[str, Any]],
    answer: str | None,
    *,
    question: str = "",
    first: int = 0,
    thought: str | None = None,
) -> dict[str, Any]:
    """Return the state update of an ended episode: `citations` and `supported`.

    `first`: steps before this index of `trajectory` are not the answer's (an earlier
    Reflexion trial). `thought`: the reasoning that gave the answer when it is no step's
    (Plan-and-Execute's replanner); default: the last Thought. Every agent writes this
    when its episode ends.
    """
    said = last_thought(trajectory, first) if thought is None else thought
    citations = cite(trajectory, answer, question=question, first=first, thought=said)
    return {
        "citations": citations,
        "supported": _supported(trajectory, answer, question, citations, first, said),
    }


def cite(
    trajectory: Sequence[Mapping[str, Any]],
    answer: str | None,
    *,
    question: str = "",
    first: int = 0,
    thought: str | None = None,
) -> list[Citation]:
    """Return the citations of `answer` over the shown sentences of `trajectory[first:]`.

    `thought`: what a yes/no answer or a label is read against (default: the last Thought).
    """
    if not answer or not answer.strip():
        return []
    shown = shown_in(trajectory, first)
    if not is_judgement(answer):
        return [
            _citation(step, s, span)
            for step, s in shown
            if (span := answer_span(s["sentence"], answer))
        ]
    thought = last_thought(trajectory, first) if thought is None else thought
    cited = [
        _citation(step, s, span)
        for step, s in shown
        if (span := quoted_span(s["sentence"], thought))
    ]
    for page in compared_pages(shown, question, thought):
        if any(c["title"] == page for c in cited):
            continue
        for step, s in shown:
            if s["title"] == page and (span := named_span(s["sentence"], thought, page)):
                cited.append(_citation(step, s, span))
                break
    return sorted(cited, key=lambda c: (c["step"], c["sentence_index"] or 0))


def shown_in(
    trajectory: Sequence[Mapping[str, Any]], first: int = 0
) -> list[tuple[int, ShownSentence]]:
    """Return each sentence the environment showed from step `first` on, once, with its step number."""
    out: list[tuple[int, ShownSentence]] = []
    seen: set[tuple[str | None, int | None, str]] = set()
    for number, step in enumerate(trajectory[first:], start=first + 1):
        for sentence in _step_shown(step):
            key = (sentence["title"], sentence["sentence_index"], sentence["sentence"])
            if key not in seen:
                seen.add(key)
                out.append((number, sentence))
    return out


def _step_shown(step: Mapping[str, Any]) -> list[ShownSentence]:
    """Return what one step showed: its record, or (older steps) its observation's sentences."""
    action = str(step.get("action", ""))
    if step.get("kind") != "executed" or not action.startswith(("Search[", "Lookup[")):
        return []
    if "shown" in step:
        return list(step.get("shown") or [])
    observation = str(step.get("observation", ""))
    if observation.startswith(_NOT_A_PAGE) or _DISAMBIGUATION in observation:
        return []
    if action.startswith("Lookup["):
        if not _RESULT_PREFIX.match(observation):
            return []
        observation = _RESULT_PREFIX.sub("", observation)
    from wikireact.wiki.sentences import split_sentences  # sentencex: only for such old steps

    return [
        ShownSentence(title=None, sentence_index=None, sentence=text)
        for text in split_sentences(observation)
    ]


def last_thought(trajectory: Sequence[Mapping[str, Any]], first: int = 0) -> str:
    """Return the last non-empty Thought from step `first` on ('' when there is none)."""
    for step in reversed(trajectory[first:]):
        if str(step.get("thought", "")).strip():
            return str(step["thought"])
    return ""


def compared_pages(
    shown: Sequence[tuple[int, ShownSentence]], question: str, thought: str
) -> list[str]:
    """Return the shown pages the question or the Thought names (the pages of a comparison)."""
    said = f"{question} {thought}".casefold()
    pages: list[str] = []
    for _, sentence in shown:
        title = sentence["title"]
        if title and title not in pages and _plain_title(title) in said:
            pages.append(title)
    return pages


def _plain_title(title: str) -> str:
    """Return a title as a question names it: `Ed Wood (film)` -> `ed wood`."""
    plain = title.replace("_", " ").strip()
    if plain.endswith(")") and " (" in plain:
        plain = plain[: plain.rindex(" (")]
    return " ".join(plain.split()).casefold()


def is_judgement(answer: str) -> bool:
    """Whether the answer is a yes/no or a FEVER label (no sentence contains it verbatim)."""
    return is_yes_no(answer) or normalize_label(answer) is not None


def _supported(
    trajectory: Sequence[Mapping[str, Any]],
    answer: str | None,
    question: str,
    citations: list[Citation],
    first: int,
    thought: str,
) -> bool:
    if not answer or not answer.strip():
        return False
    if not is_judgement(answer):
        return bool(citations)
    shown = shown_in(trajectory, first)
    if normalize_label(answer) == "NOT ENOUGH INFO":
        return bool(shown)
    pages = compared_pages(shown, question, thought)
    cited = {c["title"] for c in citations}
    return bool(citations) and all(page in cited for page in pages)


def _citation(step: int, sentence: ShownSentence, span: Span) -> Citation:
    return Citation(
        step=step,
        title=sentence["title"],
        sentence_index=sentence["sentence_index"],
        sentence=sentence["sentence"],
        start=span[0],
        end=span[1],
    )
