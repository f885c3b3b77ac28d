"""Parsing model text takes linear time, and matches what the old (backtracking) patterns matched.

Figures: bench/parse_speed.py. The bound here is generous (half a second for what takes
well under 10 ms); before the fix 2,000 blank lines took about 10 s.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikireact.eval.baselines import extract_answer
from wikireact.models.local.llama import has_complete_action
from wikireact.protocols import text as protocol
from wikireact.protocols import tools as tools_protocol
from wikireact.protocols.text import cut_at_observation, parse_output
from wikireact.wiki import sentences
from wikireact.wiki.sentences import split_sentences

BOUND_S = 0.5
HOSTILE: dict[str, Callable[[int], str]] = {
    "blank lines": lambda n: "\n" * n,
    "Action + spaces": lambda n: "Action" + " " * n + "x",
    "Action: + spaces": lambda n: "Action" + " " * n + "1" + " " * n + ":" + " " * n,
    "Thought + spaces": lambda n: "Thought" + " " * n + "x\nAction: Search[x]",
    "spaces + Observation": lambda n: " " * n + "Observation",
    "marked blank lines": lambda n: "*\n" * n + "x",
    "letters + spaces + [": lambda n: "Action: " + "a" * n + " " * n + "x",
    "answer is + spaces": lambda n: "So the answer is x" + " " * n + "y",
    "Answer: + spaces": lambda n: "\n" * n + "Answer: x" + " " * n + "y",
    "unclosed Search[": lambda n: "Search[" * n,
}
PARSERS: list[Callable[[str], object]] = [
    parse_output,
    cut_at_observation,
    extract_answer,
    has_complete_action,
    lambda text: tools_protocol.parse_tool_calls(text, []),  # the thought beside a tool call
]


@pytest.mark.parametrize("shape", HOSTILE)
def test_hostile_replies_parse_in_linear_time(shape: str) -> None:
    for size in (2_000, 10_000):
        text = HOSTILE[shape](size)
        for parse in PARSERS:
            start = time.perf_counter()
            parse(text)
            elapsed = time.perf_counter() - start
            assert elapsed < BOUND_S, (
                f"{getattr(parse, '__name__', parse)} on {shape} x{size}: {elapsed:.2f} s"
            )


def test_hostile_page_lines_split_in_linear_time() -> None:
    # Page text is hostile too: a line of 1,000 `=` took 15 s in the heading pattern.
    for text in ("=" * 10_000 + "x", "== " * 5_000 + "x\nA sentence."):
        start = time.perf_counter()
        split_sentences(text)
        assert time.perf_counter() - start < BOUND_S


def test_ten_thousand_blank_lines_are_no_action() -> None:
    start = time.perf_counter()
    parsed = parse_output(
        "Thought: hmm" + "\n" * 10_000 + "Action: Search[Ed Wood]" + "\n" * 10_000
    )
    assert time.perf_counter() - start < BOUND_S
    assert parsed.thought == "hmm" and str(parsed.result) == "Search[Ed Wood]"


# The patterns as they were (cubic on whitespace), kept as the reference for behaviour.
OLD_OBSERVATION_LINE = re.compile(r"^\s*[*_`>#]*\s*observation\b", re.IGNORECASE | re.MULTILINE)
OLD_ACTION_LABEL = re.compile(r"^\s*[*_`>#]*\s*action\s*\d*\s*[*_`]*\s*:\s*(.*)$", re.IGNORECASE)
OLD_THOUGHT_LABEL = re.compile(r"^\s*[*_`>#]*\s*thought\s*\d*\s*[*_`]*\s*:[*_`\s]*", re.IGNORECASE)
OLD_ANSWER_IS = re.compile(r"answer is[:\s]*(.+?)\s*\.?\s*$", re.IGNORECASE | re.DOTALL)
OLD_ANSWER_LINE = re.compile(r"^\s*answer\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
OLD_COMPLETE_ACTION = re.compile(r"(?im)^[^\n]*\b(search|lookup|finish)\s*\[[^\n]*\]")
OLD_HEADING = re.compile(r"^\s*=+.*=+\s*$")


def old_cut(text: str) -> str:
    match = OLD_OBSERVATION_LINE.search(text)
    return text[: match.start()].rstrip() if match else text.rstrip()


def old_extract_answer(text: str) -> str | None:
    found = OLD_ANSWER_IS.findall(text)
    if found:
        return str(found[-1]).strip().strip('"') or None
    line = OLD_ANSWER_LINE.search(text)
    return line.group(1).strip().rstrip(".") if line else None


PIECES = [
    " ",
    "  ",
    "\n",
    "\t",
    "\u2028",
    "\xa0",
    "*",
    "#",
    ">",
    "_",
    "`",
    ":",
    ".",
    '"',
    "1",
    "x",
    "[",
    "]",
    "Observation",
    "observations",
    "OBSERVATION",
    "Action",
    "action 2",
    "Thought",
    "Search",
    "lookup",
    "Finish[",
    "answer is",
    "Answer",
    "ANSWER:",
    "\u017f",
    "=",
    "==",
]
hostile_text = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)


@settings(max_examples=3_000, deadline=None)
@given(hostile_text)
def test_model_text_parses_as_before(text: str) -> None:
    assert cut_at_observation(text) == old_cut(text)
    for line in text.split("\n"):
        new, old = protocol._ACTION_LABEL.match(line), OLD_ACTION_LABEL.match(line)
        assert (new and new.group(0, 1)) == (old and old.group(0, 1))
        assert protocol._THOUGHT_LABEL.sub("", line, count=1) == OLD_THOUGHT_LABEL.sub(
            "", line, count=1
        )
        assert tools_protocol._THOUGHT_LABEL.sub("", line, count=1) == OLD_THOUGHT_LABEL.sub(
            "", line, count=1
        )
    assert extract_answer(text) == old_extract_answer(text)
    assert has_complete_action(text) == bool(OLD_COMPLETE_ACTION.search(text))
    for line in text.splitlines():
        assert sentences._is_heading(line) == bool(OLD_HEADING.match(line))
