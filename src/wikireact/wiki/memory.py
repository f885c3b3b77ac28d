"""A small in-memory page source, for tests, benchmarks and examples."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from wikireact.wiki.base import Disambiguation, Page, RequestCounter


class MemorySource:
    """Pages held in a dict `{title: text}`; optional redirects and disambiguations."""

    def __init__(
        self,
        pages: Mapping[str, str],
        *,
        redirects: Mapping[str, str] | None = None,
        disambiguations: Mapping[str, list[str]] | None = None,
    ) -> None:
        """Hold `pages`, `redirects` (alias -> title) and `disambiguations` (title -> options)."""
        self.pages = dict(pages)
        self.redirects = dict(redirects or {})
        self.disambiguations = dict(disambiguations or {})
        self._counter = RequestCounter()

    @property
    def requests(self) -> int:
        """Return the fetch/similar calls this thread made (they stand in for outside requests)."""
        return self._counter.value

    def fetch(self, title: str) -> Page | Disambiguation | None:
        """Exact title (or redirect) first, then case/whitespace-insensitive."""
        self._counter.add()
        title = self.redirects.get(title, title)
        if title in self.disambiguations:
            return Disambiguation(title, self.disambiguations[title])
        if title in self.pages:
            return Page(title, self.pages[title])
        wanted = " ".join(title.split()).casefold()
        for known, text in self.pages.items():
            if " ".join(known.split()).casefold() == wanted:
                return Page(known, text)
        return None

    def similar(self, query: str, limit: int = 5) -> list[str]:
        """Titles sharing a word with the query, closest spelling first."""
        self._counter.add()
        words = set(query.casefold().split())
        hits = [t for t in self.pages if words & set(t.casefold().split())]
        return sorted(hits, key=lambda t: -difflib.SequenceMatcher(None, t, query).ratio())[:limit]
