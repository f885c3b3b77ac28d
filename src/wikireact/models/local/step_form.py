"""What the local model's step grammar needs to know, read from the conversation so far.

The local model sees only chat turns (`{"role", "content"}` in Gemma's template): the
exemplars, then the episode's question, the model's steps and the fenced observations.
From them come the step's number, the question, the page text seen so far, and which
titles a Finish or a new Search may not start with: the guard rails that keep Gemma 3 270M
from answering with the question's subject or searching the same page over and over.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

from wikireact.models.local.answer_spans import offered_choices
from wikireact.models.local.page_text import page_text
from wikireact.protocols.labels import LABELS

Turn = dict[str, str]
OBSERVATION_OPENING = "The Observation says "
"""How a thought after page text begins, as in every exemplar: the model then restates what
it read (and names the answer) instead of copying its previous thought ("I search Canada.")."""
TITLE_PREFIX = 4
"""A Finish may not start with the first this-many characters of a title the episode searched."""
_ACTION_LINE = re.compile(r"^Action \d+: ", re.MULTILINE)
_FENCED = re.compile(r"«([^«»]*)»")
_SEARCHED = re.compile(r"^Action \d+: Search\[([^\n\]]+)\]", re.MULTILINE)
_MISSED = re.compile(r"«Could not find .*? Similar: (\[.*\])\.»", re.DOTALL)
_INPUT_LABELS = ("Question:", "Claim:")
"""How an episode's input turn starts: a HotpotQA question, or a FEVER claim."""


def step_form(
    turns: list[Turn],
    *,
    no_title_answers: bool,
    extractive_answers: bool,
    no_repeated_searches: bool,
    observation_opening: bool,
) -> dict[str, Any]:
    """Return `step_grammar`'s keyword arguments for the step `turns` ask for."""
    blocked, suggested = search_rules(turns) if no_repeated_searches else ((), ())
    return {
        "require_thought": wants_thought(turns),
        "number": step_number(turns),
        "not_answers": answer_blocks(turns) if no_title_answers else (),
        "observations": observations(turns) if extractive_answers else None,
        "question": question(turns),
        "not_searches": blocked,
        "suggested_searches": suggested,
        "thought_opening": OBSERVATION_OPENING if observation_opening and _has_page(turns) else "",
        "labels": LABELS if is_claim(turns) else (),
    }


def is_claim(turns: list[Turn]) -> bool:
    """Whether the episode checks a FEVER claim (its input turn says `Claim:`): Finish takes a label."""
    asked = _question_turn(turns)
    return asked is not None and _input_label(turns[asked]["content"]) == "Claim:"


def _input_label(content: str) -> str | None:
    """Return the label of the last input line in a user turn (`Question:`/`Claim:`), if any."""
    found = [(content.rfind(label), label) for label in _INPUT_LABELS]
    at, label = max(found)
    return label if at == 0 or (at > 0 and content[at - 1] == "\n") else None


def _has_page(turns: list[Turn]) -> bool:
    """Whether the latest observation shows page text (not a miss, and there is one)."""
    latest = _episode_turns(turns, "user") or []
    return (
        bool(latest)
        and _FENCED.search(latest[-1]["content"]) is not None
        and not _MISSED.search(latest[-1]["content"])
    )


def is_step_prompt(turns: list[Turn]) -> bool:
    """Whether the prompt's own answers are ReAct/Act steps (`Action N: ...`), not CoT or direct answers."""
    return any(t["role"] == "assistant" and _ACTION_LINE.search(t["content"]) for t in turns)


def wants_thought(turns: list[Turn]) -> bool:
    """Whether the prompt's own steps (the exemplars) have thoughts: ReAct, not Act-only."""
    return any(t["role"] == "assistant" and t["content"].startswith("Thought") for t in turns)


def question(turns: list[Turn]) -> str:
    """Return the episode's question ("" when there is none)."""
    asked = _question_turn(turns)
    if asked is None:
        return ""
    content = turns[asked]["content"]
    return content.rpartition(_input_label(content) or "Question:")[2].strip()


def observations(turns: list[Turn]) -> tuple[str, ...]:
    """Return the page text of every observation since the episode's question (no messages)."""
    return tuple(
        text
        for turn in _episode_turns(turns, "user") or []
        for fenced in _FENCED.findall(turn["content"])
        if (text := page_text(fenced))
    )


def step_number(turns: list[Turn]) -> int | None:
    """Return the number of the step asked for: 1 + the model's steps since the question."""
    steps = _episode_turns(turns)
    return None if steps is None else len(steps) + 1


def answer_blocks(turns: list[Turn]) -> tuple[str, ...]:
    """Return how a Finish copying a title this episode searched would start.

    The first `TITLE_PREFIX` characters of each title (without a leading "The"): blocking
    only the whole title, the model wrote a near copy (`Finish[Pragavala]` for Prague).
    A title the question offers as a choice ("Which is higher, X or Y?") stays open.
    """
    choices = [c.casefold() for c in offered_choices(question(turns))]
    titles = [t for t in _searched(turns) if not any(_core(t).casefold() in c for c in choices)]
    return title_starts(titles)


def title_starts(titles: Iterable[str]) -> tuple[str, ...]:
    """Return how text copying one of `titles` starts (case is ignored)."""
    prefixes = {p for title in titles for p in _prefixes(title)}
    return tuple(sorted(p for p in prefixes if p.strip()))


def search_rules(turns: list[Turn]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return how a new Search may not start, and the titles it may name all the same.

    Every title the episode searched blocks its first `TITLE_PREFIX` characters: Gemma 3
    270M otherwise searches "The Magic Flutist", "TheMagicFlute", ... once the exact title is
    refused, or after "Could not find Harvard" tries "Harpers", "Harp". The suggestions of
    the latest observation, when it is a miss, stay open ("Harvard University"), unless
    searched already.
    """
    searched = _searched(turns)
    latest = _episode_turns(turns, "user") or []
    missed = _MISSED.search(latest[-1]["content"]) if latest else None
    suggested: list[str] = []
    if missed:
        try:
            titles = ast.literal_eval(missed.group(1))
        except (ValueError, SyntaxError):
            titles = []
        done = {t.casefold() for t in searched}
        suggested = [t for t in titles if isinstance(t, str) and t.casefold() not in done]
    return title_starts(searched), tuple(suggested)


def _question_turn(turns: list[Turn]) -> int | None:
    """Return the index of the turn that asks the episode's question (None when there is none)."""
    asked = [
        i
        for i, t in enumerate(turns)
        if t["role"] == "user"
        and (t["content"].startswith(_INPUT_LABELS) or "\n\nQuestion:" in t["content"])
    ]
    return asked[-1] if asked else None


def _episode_turns(turns: list[Turn], role: str = "assistant") -> list[Turn] | None:
    """Return the turns of `role` since the episode's question (None when there is no question)."""
    asked = _question_turn(turns)
    if asked is None:
        return None
    return [t for t in turns[asked + 1 :] if t["role"] == role]


def _searched(turns: list[Turn]) -> tuple[str, ...]:
    """Return the titles this episode searched, in order."""
    titles = (
        t.strip()
        for turn in _episode_turns(turns) or []
        for t in _SEARCHED.findall(turn["content"])
    )
    return tuple(dict.fromkeys(titles))


def _core(title: str) -> str:
    """Return `title` without a leading "the"."""
    return re.sub(r"(?i)^the\s+", "", title.strip())


def _prefixes(title: str) -> tuple[str, str]:
    """Return how text copying `title` starts: its first characters, with and without "the"."""
    core = _core(title)[:TITLE_PREFIX]
    return core, f"the {core}"
