"""The live MediaWiki source, with HTTP faked at the transport level (`responses`)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlparse

import pytest
import requests
import responses
from fake_mediawiki import URL, FakeMediaWiki, live

from wikireact.errors import WikiUnavailableError
from wikireact.wiki.base import Disambiguation, Page
from wikireact.wiki.environment import search
from wikireact.wiki.live import USER_AGENT, CachedSource, LiveSource, Transport
from wikireact.wiki.snapshot import SnapshotDatabase, SnapshotSource


@pytest.fixture
def wiki() -> FakeMediaWiki:
    return FakeMediaWiki(
        pages={
            "Ed Wood": "Edward Davis Wood Jr. was an American filmmaker.\n\n== Life ==\nHe was born in 1924.",
            "Harry Potter": "Harry Potter is a series of novels.",
        },
        redirects={"Edward D. Wood Jr.": "Ed Wood"},
        disambiguations={"Mercury": ["Mercury (planet)", "Mercury (element)"]},
        search_results={
            "Ed Woody": ["Ed Wood", "Woody Allen", "Ed Sheeran", "Tim Burton", "Bela Lugosi", "X"]
        },
    )


@pytest.fixture
def api(wiki: FakeMediaWiki) -> Iterator[responses.RequestsMock]:
    def answer(request: requests.PreparedRequest) -> tuple[int, dict, str]:
        import json

        assert request.headers["User-Agent"] == USER_AGENT
        params = dict(parse_qsl(urlparse(str(request.url)).query, keep_blank_values=True))
        return 200, {}, json.dumps(wiki.reply(params))

    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add_callback(responses.GET, URL, callback=answer)
        yield mock


def test_page_over_https_without_auto_suggest(
    api: responses.RequestsMock, wiki: FakeMediaWiki
) -> None:
    page = live().fetch("Harry Potter")
    assert page == Page("Harry Potter", "Harry Potter is a series of novels.")
    assert all(str(call.request.url).startswith("https://") for call in api.calls)
    assert all(c.get("list") != "search" for c in wiki.calls)  # no auto-suggest search


def test_redirect_is_followed(api: responses.RequestsMock) -> None:
    page = live().fetch("Edward D. Wood Jr.")
    assert isinstance(page, Page) and page.title == "Ed Wood"


def test_missing_page_gives_similar_titles(api: responses.RequestsMock) -> None:
    found = search(live(), "Ed Woody")
    assert found.observation == (
        "Could not find Ed Woody. Similar: ['Ed Wood', 'Woody Allen', 'Ed Sheeran', 'Tim Burton', 'Bela Lugosi']."
    )
    assert found.page_title is None


def test_disambiguation_without_bs4_warnings(api: responses.RequestsMock) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = live().fetch("Mercury")
    assert found == Disambiguation("Mercury", ["Mercury (planet)", "Mercury (element)"])


def test_sections_are_dropped_from_sentences(api: responses.RequestsMock) -> None:
    found = search(live(), "Ed Wood")
    assert found.sentences == [
        "Edward Davis Wood Jr. was an American filmmaker.",
        "He was born in 1924.",
    ]


def test_429_then_success_is_retried_with_backoff(wiki: FakeMediaWiki) -> None:
    waits: list[float] = []
    with responses.RequestsMock() as mock:
        mock.add(responses.GET, URL, status=429, headers={"Retry-After": "2"})
        mock.add(responses.GET, URL, status=503)
        mock.add(
            responses.GET,
            URL,
            json=wiki.reply({"list": "search", "srsearch": "Ed Woody", "srlimit": "5"}),
        )
        source = LiveSource(Transport(sleep=waits.append))
        assert source.similar("Ed Woody")[0] == "Ed Wood"
    assert waits[0] == 2.0  # Retry-After honoured
    assert 0.5 <= waits[1] <= 1.5  # exponential backoff (1 s base on the 2nd retry) with jitter
    assert source.requests == 3


def test_timeout_becomes_a_clear_observation() -> None:
    with responses.RequestsMock() as mock:
        mock.add(responses.GET, URL, body=requests.exceptions.ReadTimeout("slow"))
        found = search(live(timeout_s=10.0, retries=2), "Ed Wood")
        assert len(mock.calls) == 3
    assert found.observation == "Wikipedia is unavailable right now (timeout after 10 s)."


@pytest.mark.parametrize("body", ["<html>Service Unavailable</html>", '{"query": {"pages": {"1": '])
def test_malformed_reply_becomes_a_clear_observation(body: str) -> None:
    with responses.RequestsMock() as mock:
        mock.add(responses.GET, URL, body=body, status=200)
        found = search(live(retries=1), "Ed Wood")
    assert found.observation == "Wikipedia is unavailable right now (the reply was not valid JSON)."


def test_unexpected_json_shape_becomes_a_clear_observation() -> None:
    with responses.RequestsMock() as mock:
        mock.add(responses.GET, URL, json={"query": {"unexpected": True}})
        found = search(live(), "Ed Wood")
    assert found.observation.startswith("Wikipedia sent a reply that could not be read")


def test_offline_machine_becomes_a_clear_observation() -> None:
    with responses.RequestsMock() as mock:
        mock.add(responses.GET, URL, body=requests.exceptions.ConnectionError("no route"))
        found = search(live(retries=0), "Ed Wood")
    assert (
        found.observation == "Wikipedia is unavailable right now (cannot connect: ConnectionError)."
    )


def test_cache_fetches_a_title_once_and_records_for_replay(
    api: responses.RequestsMock, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    db = tmp_path / "cache.db"
    cached = CachedSource(live(), SnapshotDatabase.create(db))
    first = [search(cached, t).observation for t in ("Edward D. Wood Jr.", "Ed Woody", "Mercury")]
    requests_after_first = len(wiki.calls)
    second = [search(cached, t).observation for t in ("Edward D. Wood Jr.", "Ed Woody", "Mercury")]
    assert second == first
    assert len(wiki.calls) == requests_after_first  # nothing fetched twice
    assert search(cached, "Ed Wood").page_title == "Ed Wood"  # the redirect target is cached too
    assert len(wiki.calls) == requests_after_first
    # the cache is a snapshot: replay offline, identically
    replay = SnapshotSource.open(db)
    assert [
        search(replay, t).observation for t in ("Edward D. Wood Jr.", "Ed Woody", "Mercury")
    ] == first


def test_failures_are_not_cached(tmp_path: Path, wiki: FakeMediaWiki) -> None:
    cached = CachedSource(live(retries=0), SnapshotDatabase.create(tmp_path / "c.db"))
    with responses.RequestsMock() as mock:
        mock.add(responses.GET, URL, status=500)
        with pytest.raises(WikiUnavailableError):
            cached.fetch("Ed Wood")
    with responses.RequestsMock() as mock:
        mock.add_callback(
            responses.GET,
            URL,
            callback=lambda r: (
                200,
                {},
                __import__("json").dumps(
                    wiki.reply(dict(parse_qsl(urlparse(str(r.url)).query, keep_blank_values=True)))
                ),
            ),
        )
        assert isinstance(cached.fetch("Ed Wood"), Page)


def test_invalid_unicode_in_a_reply_is_repaired_and_cached(
    api: responses.RequestsMock, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    wiki.pages["Odd"] = "Odd \ud800 text is here."  # JSON carries it as "\ud800"
    wiki.search_results["Od"] = ["Odd", "Bad \udfff title"]
    cached = CachedSource(live(), SnapshotDatabase.create(tmp_path / "cache.db"))
    assert search(cached, "Odd").observation == "Odd \ufffd text is here."
    assert (
        search(cached, "Od").observation
        == "Could not find Od. Similar: ['Odd', 'Bad \ufffd title']."
    )
    assert (
        search(SnapshotSource.open(tmp_path / "cache.db"), "Odd").observation
        == "Odd \ufffd text is here."
    )
