"""Every title of a snapshot in memory, sorted, for asking "does some title start like this?".

The local model's `Search[...]` is decoded so that it can only spell a title the snapshot
holds (`wikireact.models.local.title_constraint`). That asks, for every token the model
prefers, whether some title starts with the argument written so far plus the token's text.
A trie of Python objects over 5 M titles would take gigabytes; here the titles are one
`bytes` string in UTF-8 order (SQLite's own order for the `pages.title` index) with an
array of offsets, so the titles starting with a prefix are one contiguous range found by
two binary searches. About 30 bytes per title: 30 MB for 1 M titles (see
`bench/title_constraint.py`).

A prefix may also be refused whole, ignoring case (the searched titles a new Search may
not start with, as the step grammar refuses them): `reaches` then asks for a title in the
range that none of them starts.

The index of a snapshot file is built once per process, at its first use, and shared
(`title_index`).
"""

from __future__ import annotations

import bisect
import sqlite3
import threading
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path

from wikireact.wiki.snapshot import SnapshotDatabase

MAX_TITLE_CHARS = 120
"""Longer titles are left out: the step grammar allows no longer Search argument."""
_BEYOND = b"\xff"
"""A byte no UTF-8 text holds: `prefix + _BEYOND` sorts after every title starting with `prefix`."""


class _Titles(Sequence[bytes]):
    """The sorted titles as a sequence of `bytes` (what `bisect` searches)."""

    def __init__(self, blob: bytes, offsets: array) -> None:
        self._blob, self._offsets = blob, offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, index: int) -> bytes:  # type: ignore[override]
        return self._blob[self._offsets[index] : self._offsets[index + 1]]


class TitleIndex:
    """The titles a Search may name, sorted in UTF-8 byte order."""

    def __init__(self, titles: Iterable[str]) -> None:
        """Index `titles` (any order; duplicates, and titles no Search can spell, are dropped)."""
        self._build(sorted({t.encode() for t in titles if usable(t)}))

    @classmethod
    def from_snapshot(cls, path: Path) -> TitleIndex:
        """Read every title of the snapshot at `path` (pages, redirects, disambiguations)."""
        store = SnapshotDatabase.open_readonly(path)
        try:
            rows = store.conn.execute(
                "SELECT title FROM pages WHERE kind != 'missing' ORDER BY title"
            )
            index = cls.__new__(cls)
            index._build(t.encode() for (t,) in rows if usable(t))
        except sqlite3.Error as exc:
            raise ValueError(f"cannot read the titles of {path} ({exc})") from None
        finally:
            store.close()
        return index

    def _build(self, ordered: Iterable[bytes]) -> None:
        """Keep `ordered` (sorted, distinct) as one string and its offsets."""
        blob, offsets = bytearray(), array("q", [0])
        for title in ordered:
            blob += title
            offsets.append(len(blob))
        self._titles = _Titles(bytes(blob), offsets)

    def __len__(self) -> int:
        """How many titles there are."""
        return len(self._titles)

    def memory_bytes(self) -> int:
        """Return the bytes the index holds (its titles and their offsets)."""
        return len(self._titles._blob) + self._titles._offsets.itemsize * len(self._titles._offsets)

    def count(self, prefix: bytes) -> int:
        """How many titles start with `prefix` (UTF-8)."""
        low = bisect.bisect_left(self._titles, prefix)
        return bisect.bisect_left(self._titles, prefix + _BEYOND, low) - low

    def __contains__(self, title: object) -> bool:
        """Whether `title` (UTF-8 bytes) is a title."""
        if not isinstance(title, bytes):
            return False
        at = bisect.bisect_left(self._titles, title)
        return at < len(self._titles) and self._titles[at] == title

    def reaches(self, prefix: bytes, refused: Sequence[str] = ()) -> bool:
        """Whether a title starts with `prefix` and with none of `refused` (ignoring case)."""
        total = self.count(prefix)
        return total > 0 and total > sum(self._refused(prefix, phrase) for phrase in refused)

    def is_title(self, title: bytes, refused: Sequence[str] = ()) -> bool:
        """Whether `title` is a title that starts with none of `refused` (ignoring case)."""
        return title in self and not any(_starts(title, phrase) for phrase in refused)

    def _refused(self, prefix: bytes, phrase: str) -> int:
        """How many titles starting with `prefix` start with `phrase`, in any case.

        Walks the ways of writing `phrase` (each letter lower or upper case, as the step
        grammar reads it) that some title starts with, and that agree with `prefix`.
        """
        found = 0
        ways: list[tuple[bytes, int]] = [(b"", 0)]
        while ways:
            written, done = ways.pop()
            if done == len(phrase):
                if prefix.startswith(written):
                    return self.count(prefix)  # every title here starts with the phrase
                found += self.count(written)
                continue
            for char in dict.fromkeys(phrase[done].lower() + phrase[done].upper()):
                longer = written + char.encode()
                if longer.startswith(prefix):
                    if self.count(longer):
                        ways.append((longer, done + 1))
                elif prefix.startswith(longer):
                    ways.append((longer, done + 1))
        return found


def usable(title: str) -> bool:
    """Whether a Search can spell `title` (the step grammar's argument: no brackets, no newline)."""
    return (
        0 < len(title) <= MAX_TITLE_CHARS
        and not title[0].isspace()
        and not any(c in title for c in "[]\n")
    )


def minimal(phrases: Iterable[str]) -> tuple[str, ...]:
    """Return the refused phrases lower-cased, without those a shorter one already refuses."""
    kept: list[str] = []
    for phrase in sorted({p.lower() for p in phrases if p.strip()}, key=len):
        if not any(phrase.startswith(k) for k in kept):
            kept.append(phrase)
    return tuple(kept)


def _starts(title: bytes, phrase: str) -> bool:
    """Whether `title` starts with `phrase`, each letter in either case."""
    text = title.decode(errors="replace")
    return len(text) >= len(phrase) and all(
        t in (p.lower(), p.upper()) for t, p in zip(text, phrase, strict=False)
    )


_INDEXES: dict[tuple[str, int, int], TitleIndex] = {}
_INDEXES_LOCK = threading.Lock()
KEPT_INDEXES = 2
"""How many snapshots' indexes stay in memory (the most recently built)."""


def title_index(path: Path) -> TitleIndex:
    """Return the index of the snapshot at `path`, built at its first use and shared.

    A file changed since (another size or modification time) is indexed again.
    """
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _INDEXES_LOCK:  # one build per snapshot, even when episodes ask at once
        if key not in _INDEXES:
            while len(_INDEXES) >= KEPT_INDEXES:
                del _INDEXES[next(iter(_INDEXES))]
            _INDEXES[key] = TitleIndex.from_snapshot(path)
        return _INDEXES[key]
