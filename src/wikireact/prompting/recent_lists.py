"""The last few lists a cache was asked about, and which one a new list extends.

A long episode's prompt, history and message list at step N+1 start with the very same
objects as at step N. `RecentLists` keeps the last few lists with a value computed for each
(a token count, the clearable steps) so that a list extending one of them (the same objects
first, checked by identity) costs only the work for its new items.
"""

from __future__ import annotations

import operator
import threading
from collections import deque
from collections.abc import Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Value = TypeVar("Value")


class RecentLists(Generic[Item, Value]):
    """Up to `kept` recent lists, each with its value; the latest one a new list extends."""

    def __init__(self, kept: int) -> None:
        """Keep the last `kept` lists remembered."""
        self._lock = threading.Lock()
        self._recent: deque[tuple[list[Item], Value]] = deque(maxlen=kept)

    def extended(self, items: Sequence[Item]) -> tuple[int, Value] | None:
        """Return the length and value of the latest kept list `items` starts with (None: none)."""
        with self._lock:
            recent = list(self._recent)
        for before, value in reversed(recent):
            if len(before) <= len(items) and all(map(operator.is_, before, items)):
                return len(before), value
        return None

    def remember(self, items: Sequence[Item], value: Value) -> None:
        """Keep a copy of `items` with its `value` (the oldest kept goes)."""
        with self._lock:
            self._recent.append((list(items), value))
