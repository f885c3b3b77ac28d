"""What every Wikipedia source returns, and the interface they share."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Page:
    """A page found by its title (after redirects): its canonical title and plain text."""

    title: str
    text: str
    sentences: tuple[str, ...] | None = None
    """The source's own sentence split (a dump's, HotpotQA's); None: split the text ourselves."""


@dataclass(frozen=True)
class Disambiguation:
    """A disambiguation page: the titles it lists."""

    title: str
    options: list[str] = field(default_factory=list)


class WikiSource(Protocol):
    """A source of Wikipedia pages: the live API, a snapshot, or a test double."""

    @property
    def requests(self) -> int:
        """How many requests to the outside world this source has made so far."""
        ...

    def fetch(self, title: str) -> Page | Disambiguation | None:
        """Return the page with exactly this title (redirects followed), or None if there is none."""
        ...

    def similar(self, query: str, limit: int = 5) -> list[str]:
        """Up to `limit` titles matching `query`, best first."""
        ...


class RequestCounter:
    """Counts a source's requests per thread, so concurrent episodes each see their own."""

    def __init__(self) -> None:
        """Start every thread at zero."""
        self._local = threading.local()

    @property
    def value(self) -> int:
        """Return the number of requests the calling thread has made."""
        return int(getattr(self._local, "count", 0))

    def add(self) -> None:
        """Count one request of the calling thread."""
        self._local.count = self.value + 1
