"""Search and Lookup semantics, with the paper's observation formats."""

from __future__ import annotations

from wikireact import Disambiguation, MemorySource
from wikireact.errors import WikiUnavailableError
from wikireact.wiki.environment import NO_PAGE_OPEN, lookup, search, truncate

TEXT = (
    "Alpha was born in Rome. It moved to Paris. Alpha was born again in myth. "
    "The end came late. BORN free is a film. Sixth sentence here. Seventh one."
)


def source() -> MemorySource:
    return MemorySource(
        {"Alpha": TEXT, "Alpha Centauri": "A star system.", "Beta": "Beta is second."},
        redirects={"Alfa": "Alpha"},
        disambiguations={"Mercury": ["Mercury (planet)", "Mercury (element)", "Freddie Mercury"]},
    )


def test_search_hit_shows_first_five_sentences_and_keeps_all() -> None:
    found = search(source(), "Alpha")
    assert found.page_title == "Alpha"
    assert len(found.sentences) == 7
    assert found.observation == " ".join(found.sentences[:5])


def test_search_follows_redirects_and_matches_case() -> None:
    assert search(source(), "Alfa").page_title == "Alpha"
    assert search(source(), "  alpha ").page_title == "Alpha"


def test_search_miss_lists_similar_and_opens_nothing() -> None:
    found = search(source(), "Alpha Star")
    assert found.observation == "Could not find Alpha Star. Similar: ['Alpha Centauri', 'Alpha']."
    assert found.page_title is None and found.sentences == []


def test_disambiguation_lists_options() -> None:
    found = search(source(), "Mercury")
    assert found.observation == (
        "Mercury may refer to several pages. Similar: "
        "['Mercury (planet)', 'Mercury (element)', 'Freddie Mercury']."
    )
    assert found.page_title is None


def test_unavailable_source_becomes_an_observation() -> None:
    class Down(MemorySource):
        def fetch(self, title: str) -> None:
            raise WikiUnavailableError("Wikipedia is unavailable right now (timeout after 10 s).")

    found = search(Down({}), "Alpha")
    assert found.observation == "Wikipedia is unavailable right now (timeout after 10 s)."
    assert found.page_title is None


def test_lookup_cursor_sequence() -> None:
    sentences = search(source(), "Alpha").sentences
    cursors: dict[str, int] = {}
    seen = []
    for keyword in ["born", "born", "Paris", "BORN", "born", "paris"]:
        result = lookup(sentences, cursors, keyword)
        cursors = result.cursors
        seen.append(result.observation)
    assert seen == [
        "(Result 1 / 3) Alpha was born in Rome.",
        "(Result 2 / 3) Alpha was born again in myth.",
        "(Result 1 / 1) It moved to Paris.",
        "(Result 3 / 3) BORN free is a film.",  # keyword keeps its place; case-insensitive
        "No more results.",
        "No more results.",
    ]


def test_lookup_without_a_page() -> None:
    assert lookup([], {}, "born").observation == NO_PAGE_OPEN
    assert lookup(None, {}, "born").observation == NO_PAGE_OPEN


def test_lookup_with_no_match() -> None:
    assert lookup(["One.", "Two."], {}, "zebra").observation == "No more results."


def test_truncate_marks_the_cut() -> None:
    assert truncate("short", 100) == "short"
    cut = truncate("x" * 2000, 1000)
    assert len(cut) <= 1000 and cut.endswith("more characters]") and "truncated" in cut


def test_disambiguation_is_exported_and_what_search_shows() -> None:
    found = search(
        MemorySource({}, disambiguations={"Mercury": ["Mercury (planet)", "Freddie Mercury"]}),
        "Mercury",
    )
    assert isinstance(source().fetch("Mercury"), Disambiguation)
    assert found.page_title is None and found.sentences == []
    assert (
        found.observation
        == "Mercury may refer to several pages. Similar: ['Mercury (planet)', 'Freddie Mercury']."
    )
