"""The value function's reply read tolerantly: a score from 1 to 10, or a recorded low value.

Accepted: `Value: 7`, `**Score**: 8/10`, `value = 6.5`, or a line that starts with the
number. Lines are scanned one by one (no pattern runs over the whole reply), and only the
reply's first `READ_CHARS` characters. A reply without a readable score in range is never
an error: the node gets `LOW_VALUE` and the record says the score was not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

READ_CHARS = 2000
LOW_VALUE = 0.1
"""The value of a node whose score could not be read (a score of 1)."""
_LABELLED = re.compile(r"(?:value|score)\W{0,10}(\d{1,3}(?:\.\d+)?)", re.IGNORECASE)
_LEADING = re.compile(r"^\W{0,10}(\d{1,3}(?:\.\d+)?)(?!\d)")


@dataclass(frozen=True)
class Value:
    """A value reply read: the value in [0.1, 1], whether a score was read, the score's text."""

    value: float
    valued: bool
    score: str


def read_value(reply: str) -> Value:
    """Return the value of a reply (score / 10), or `LOW_VALUE` when no score can be read."""
    lines = reply[:READ_CHARS].splitlines()
    for pattern in (_LABELLED, _LEADING):
        for line in lines:
            found = pattern.search(line)
            if found is None:
                continue
            score = float(found.group(1))
            if 0 <= score <= 10:
                return Value(max(score, 1.0) / 10, True, found.group(1))
    shown = " ".join(reply.split())[:80]
    return Value(LOW_VALUE, False, shown)
