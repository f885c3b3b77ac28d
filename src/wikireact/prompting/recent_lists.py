"""The last few lists a cache was asked about, and which one a new list extends.

A long episode's prompt, history and message list at step N+1 start with the very same
objects as at step N. `RecentLists` keeps the last few lists with a value computed for each
(a token count, the clearable steps) so that a list extending one of them (the same objects
first) costs only the work for its new items.

The lists are kept as `KeptList`s: frozen copies in pieces of `PIECE` items, a copy sharing
every full piece with the kept list it extends. A whole copy a step of a 4,800-step episode's
prompt (9,600 messages) cost copying it, freeing it some steps later, and Python's young
garbage collections going over it (bench/step_length.py); a shared copy costs its new items.

The check that a list extends a kept one compares them piece by piece as lists. Python
compares list items in C and takes an item that is the very same object as equal without
calling its `__eq__`, so the check costs a few nanoseconds an item where `all(map(operator.is_,
...))` made a Python call per item. An item that is not the same object is compared by value,
so an equal one (a resumed run's rebuilt step) matches too: what the callers compute from an
item (a token count, its turns, whether it may be cleared) depends only on its value.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from typing import Generic, TypeVar

Item = TypeVar("Item")
Value = TypeVar("Value")

PIECE = 256
"""Items per piece of a `KeptList`: a kept list extending another copies at most this many of
the other's items (its last, partly filled piece) besides its new ones."""


def _as_list(items: Sequence[Item]) -> list[Item]:
    return items if type(items) is list else list(items)


class KeptList(Generic[Item]):
    """A frozen copy of a list, in pieces shared with the kept list it was made from."""

    __slots__ = ("_length", "_pieces")

    def __init__(self, items: Sequence[Item] = ()) -> None:
        """Copy `items` (nothing is shared: see `plus` for a list that extends a kept one)."""
        self._pieces: list[list[Item]] = []
        self._length = 0
        self._append(items)

    def plus(self, more: Sequence[Item]) -> KeptList[Item]:
        """Return this list followed by `more`, sharing this one's full pieces (this one is unchanged)."""
        out: KeptList[Item] = KeptList()
        out._pieces, out._length = list(self._pieces), self._length
        if out._pieces and len(out._pieces[-1]) < PIECE:  # refill the last piece: a new one
            last = out._pieces.pop()
            out._length -= len(last)
            more = [*last, *more]
        out._append(more)
        return out

    def renewed(self, items: Sequence[Item]) -> KeptList[Item]:
        """Return a kept copy of `items`, a list this one `starts`, sharing the pieces it can.

        A full piece is shared when its first and last items are the very objects `items` has
        there; a piece matched only by value (a resumed run's rebuilt steps and messages) is
        copied from `items`, so that the next list is recognised by identity again, in C,
        instead of by each item's `__eq__` from then on.
        """
        out: KeptList[Item] = KeptList()
        for piece in self._pieces:
            at = out._length
            if len(piece) < PIECE:
                break
            same = piece[0] is items[at] and piece[-1] is items[at + PIECE - 1]
            out._pieces.append(piece if same else _as_list(items[at : at + PIECE]))
            out._length += PIECE
        out._append(items[out._length :])
        return out

    def _append(self, items: Sequence[Item]) -> None:
        for at in range(0, len(items), PIECE):
            self._pieces.append(_as_list(items[at : at + PIECE]))
        self._length += len(items)

    def starts(self, items: Sequence[Item]) -> bool:
        """Whether `items` begins with this list's items: the same objects, or equal ones."""
        if self._length > len(items):
            return False
        at = 0
        for piece in self._pieces:
            if _as_list(items[at : at + len(piece)]) != piece:
                return False
            at += len(piece)
        return True

    def __len__(self) -> int:
        """Return the number of items."""
        return self._length

    def __iter__(self) -> Iterator[Item]:
        """Iterate over the items in order."""
        return chain.from_iterable(self._pieces)


class RecentLists(Generic[Item, Value]):
    """Up to `kept` recent lists, each with its value; the latest one a new list extends."""

    def __init__(self, kept: int) -> None:
        """Keep the last `kept` lists remembered."""
        self._lock = threading.Lock()
        self._recent: deque[tuple[KeptList[Item], Value]] = deque(maxlen=kept)

    def extended(self, items: Sequence[Item]) -> tuple[KeptList[Item], Value] | None:
        """Return the latest kept list `items` starts with, and its value (None: none)."""
        with self._lock:
            recent = list(self._recent)
        for before, value in reversed(recent):
            if before.starts(items):
                return before, value
        return None

    def remember(
        self, items: Sequence[Item], value: Value, extends: KeptList[Item] | None = None
    ) -> None:
        """Keep `items` with its `value` (the oldest kept goes); `extends`: a kept list it starts."""
        kept = KeptList(items) if extends is None else extends.renewed(items)
        with self._lock:
            self._recent.append((kept, value))

    def value(
        self, items: Sequence[Item], empty: Value, extend: Callable[[Value, int], Value]
    ) -> Value:
        """Return `items`' value, extended from the latest kept list it starts with, and keep it.

        That is `extend(value, done)`: the kept list's value and length (`empty` and 0 when
        none starts it).

        A list a kept one already equals is neither computed nor kept again (a step's prompt
        is counted twice, for fitting and by the model).
        """
        found = self.extended(items)
        if found is None:
            out = extend(empty, 0)
            self.remember(items, out)
            return out
        before, known = found
        if len(before) == len(items):
            return known
        out = extend(known, len(before))
        self.remember(items, out, before)
        return out
