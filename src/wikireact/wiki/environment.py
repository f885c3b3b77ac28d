"""Search and Lookup with the paper's observation formats.

`search` asks a source and returns the new page state and the observation; `lookup`
is a pure function of the page's sentences and the cursors. Nothing here raises for the
outside world's sake: a source that cannot answer gives an outcome marked `unavailable`
(an outage is not a result: `act` stops the episode, resumably, instead of observing it).
A page the source holds but cannot read (a corrupt snapshot page) is permanent, not an
outage: its message is the observation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wikireact.errors import WikiPageUnreadableError, WikiUnavailableError
from wikireact.wiki.base import Disambiguation, Page, WikiSource
from wikireact.wiki.sentences import split_sentences

FIRST_SENTENCES = 5
SIMILAR_TITLES = 5
NO_PAGE_OPEN = "No page is open: use Search[title] to open a page before Lookup."


@dataclass(frozen=True)
class SearchOutcome:
    """The observation of a Search and the page it leaves open (None after a miss)."""

    observation: str
    page_title: str | None = None
    sentences: list[str] = field(default_factory=list)
    unavailable: bool = False
    """True when the source could not answer: `observation` then says why."""


@dataclass(frozen=True)
class LookupOutcome:
    """The observation of a Lookup and the updated cursors."""

    observation: str
    cursors: dict[str, int]
    sentence_index: int | None = None
    """The index among the page's sentences of the sentence shown (None: none was shown)."""


def truncate(text: str, cap: int) -> str:
    """Cap `text` at `cap` characters, ending with a visible marker when cut."""
    if len(text) <= cap:
        return text
    marker = f" [… truncated, {len(text) - cap} more characters]"
    keep = max(cap - len(marker), 0)
    return text[:keep].rstrip() + marker


def search(source: WikiSource, title: str) -> SearchOutcome:
    """Open the page titled `title`, or list similar titles; never raises for source failures."""
    try:
        found = source.fetch(title)
        if isinstance(found, Page):
            sentences = (
                list(found.sentences)
                if found.sentences is not None
                else split_sentences(found.text)
            )
            if sentences:
                return SearchOutcome(" ".join(sentences[:FIRST_SENTENCES]), found.title, sentences)
            return SearchOutcome(f"The page {found.title} has no text.", found.title, [])
        if isinstance(found, Disambiguation):
            options = found.options[:SIMILAR_TITLES]
            return SearchOutcome(f"{found.title} may refer to several pages. Similar: {options}.")
        similar = source.similar(title, SIMILAR_TITLES)
    except WikiPageUnreadableError as exc:  # permanent: the observation, not an outage
        return SearchOutcome(str(exc))
    except WikiUnavailableError as exc:
        return SearchOutcome(str(exc), unavailable=True)
    return SearchOutcome(f"Could not find {title}. Similar: {similar[:SIMILAR_TITLES]}.")


def lookup_key(keyword: str) -> str:
    """Return the cursor key of a Lookup keyword: spaces collapsed, case folded."""
    return " ".join(keyword.split()).casefold()


def lookup(sentences: list[str] | None, cursors: dict[str, int], keyword: str) -> LookupOutcome:
    """Show the next sentence of the open page containing `keyword` (case-insensitive)."""
    if not sentences:
        return LookupOutcome(NO_PAGE_OPEN, dict(cursors))
    key = lookup_key(keyword)
    matches = [i for i, s in enumerate(sentences) if key in s.casefold()]
    shown = cursors.get(key, 0)
    if shown >= len(matches):
        return LookupOutcome("No more results.", {**cursors, key: shown})
    index = matches[shown]
    observation = f"(Result {shown + 1} / {len(matches)}) {sentences[index]}"
    return LookupOutcome(observation, {**cursors, key: shown + 1}, index)
