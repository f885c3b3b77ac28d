"""What every Wikipedia source returns, and the interface they share."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol

from wikireact.errors import WikireactError


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


class WikiUnavailableError(WikireactError):
    """The source could not answer (network, timeout, bad reply, unreadable file).

    Its message is written for the model and the user, e.g.
    `Wikipedia is unavailable right now (timeout after 10 s).`
    """


class WikiPageUnreadableError(WikireactError):
    """The source answered, but a page it holds cannot be read (e.g. a corrupt snapshot page).

    Unlike an outage it does not pass with time (resuming would meet it again), so `search`
    makes its message the observation and the episode goes on.
    """


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
