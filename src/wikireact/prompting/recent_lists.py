"""The last few lists a cache was asked about, and which one a new list extends.

A long episode's prompt, history and message list at step N+1 start with the very same
objects as at step N. `RecentLists` keeps the last few lists with a value computed for each
(a token count, the clearable steps) so that a list extending one of them (the same objects
first) costs only the work for its new items.

`starts_with` is the check: the kept list against the new one's head, compared as lists. Python
compares list items in C and takes an item that is the very same object as equal without
calling its `__eq__`, so the check costs a few nanoseconds an item where `all(map(operator.is_,
...))` made a Python call per item: 0.2 ms for a 4,800-step prompt, several times a step
(bench/step_length.py). An item that is not the same object is compared by value, so an equal
one (a resumed run's rebuilt step) matches too: what the callers compute from an item (a
token count, its turns, whether it may be cleared) depends only on its value.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Value = TypeVar("Value")


def starts_with(items: Sequence[Item], head: list[Item]) -> bool:
    """Whether `items` begins with `head`'s items: the same objects, or equal ones."""
    if len(head) > len(items):
        return False
    start = items[: len(head)]
    return (start if type(start) is list else list(start)) == head


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
            if starts_with(items, before):
                return len(before), value
        return None

    def remember(self, items: Sequence[Item], value: Value) -> None:
        """Keep a copy of `items` with its `value` (the oldest kept goes)."""
        with self._lock:
            self._recent.append((list(items), value))

    def value(
        self, items: Sequence[Item], empty: Value, extend: Callable[[Value, int], Value]
    ) -> Value:
        """Return `items`' value, extended from the latest kept list it starts with, and keep it.

        That is `extend(value, done)`: the kept list's value and length (`empty` and 0 when
        none starts it).

        A list a kept one already equals is neither computed nor copied again (a step's prompt
        is counted twice, for fitting and by the model): each copy of a long prompt is a young
        list every garbage collection goes over until it is old.
        """
        found = self.extended(items)
        done, known = found if found is not None else (0, empty)
        if found is not None and done == len(items):
            return known
        out = extend(known, done)
        self.remember(items, out)
        return out
