"""Parsing hostile replies and pages: milliseconds per text, which must grow linearly with size.

Each shape once made a regex backtrack (3,000 blank lines took 40 s in one call; a page
line of 1,000 `=` signs 15 s). Every shape is parsed at 10,000 and 100,000 characters by
the ReAct parser (`parse_output`, which includes `cut_at_observation`), the tools
protocol's thought reader, the baselines' answer extraction, the local model's stop check
and the page sentence splitter; the slowest counts. Target (exit 1 when missed): every
10,000-character shape (e.g. 10,000 blank lines) parses in under 50 ms; the 100k figures
show the growth is linear (about 10x, not 100x or 1000x).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from table import Row, print_rows

from wikireact.eval.baselines import extract_answer
from wikireact.models.local.llama import has_complete_action
from wikireact.protocols.text import parse_output
from wikireact.protocols.tools import parse_tool_calls
from wikireact.wiki.sentences import split_sentences

TARGET_MS = 50.0
SIZES = (10_000, 100_000)
SHAPES: dict[str, Callable[[int], str]] = {
    "blank lines": lambda n: "\n" * n,
    "Action + spaces": lambda n: "Action" + " " * n + "x",
    "Thought + spaces": lambda n: "Thought" + " " * n + "x\nAction: Search[x]",
    "spaces + Observation": lambda n: " " * n + "Observation",
    "marked blank lines": lambda n: "*\n" * n,
    "unclosed Search[": lambda n: "Search[" * (n // 7),
    "answer is + spaces": lambda n: "So the answer is x" + " " * n + "y",
    "Answer: lines": lambda n: "\n" * n + "Answer:",
    "a page line of = signs": lambda n: "=" * n + "x",
}
PARSERS: dict[str, Callable[[str], object]] = {
    "parse_output": parse_output,
    "extract_answer": extract_answer,
    "has_complete_action": has_complete_action,
    "split_sentences (page text)": split_sentences,
    "parse_tool_calls (thought)": lambda text: parse_tool_calls(text, []),
}


def slowest_ms(text: str) -> tuple[str, float]:
    """Return the slowest parser on `text` and its milliseconds (best of 3)."""
    worst = ("", 0.0)
    for name, parse in PARSERS.items():
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            parse(text)
            best = min(best, (time.perf_counter() - start) * 1000)
        worst = max(worst, (name, best), key=lambda item: item[1])
    return worst


def rows() -> list[Row]:
    """Return, per shape and size, the slowest parser's time."""
    out = []
    for shape, make in SHAPES.items():
        for size in SIZES:
            parser, ms = slowest_ms(make(size))
            target = f"< {TARGET_MS:g} ms" if size == SIZES[0] else f"({parser})"
            ok = ms < TARGET_MS if size == SIZES[0] else None
            out.append(Row(f"parse {shape}, {size:,}", ms, "ms", target, ok))
    return out


def main() -> int:
    """Print the figures."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
