"""The live source: the MediaWiki Action API through the `wikipedia` package, hardened.

The package has no timeout, no status check, no retries and plain http. Every one of
its calls goes through `wikipedia.wikipedia._wiki_request`, which this module replaces
(once, at import) with a dispatcher to the calling source's `Transport`: https, a
descriptive User-Agent, a timeout, and retries with exponential backoff and jitter on
429/5xx/timeouts/malformed replies. Titles are never rewritten (`auto_suggest=False`).
Every failure ends as `WikiUnavailableError` with a message fit to be an observation.
"""

from __future__ import annotations

import contextvars
import json
import random
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import requests
import wikipedia
import wikipedia.wikipedia as wikipedia_module

from wikireact.errors import MalformedRowError, WikiUnavailableError
from wikireact.protocols.text import valid_unicode
from wikireact.wiki.base import Disambiguation, Page, RequestCounter, WikiSource
from wikireact.wiki.snapshot import SnapshotDatabase

API_URL = "https://en.wikipedia.org/w/api.php"
USER_AGENT = (
    "wikireact/0.1 (https://github.com/wikireact/wikireact; ReAct research agent) "
    f"requests/{requests.__version__}"
)
RETRYABLE_STATUS = {429, 500, 502, 503, 504}


class Transport:
    """HTTP GETs to the API with a timeout and retries; counts requests per thread."""

    def __init__(
        self,
        api_url: str = API_URL,
        *,
        timeout_s: float = 10.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Configure the endpoint, timeout (seconds) and retry schedule."""
        self.api_url = api_url
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.session = session or requests.Session()
        self.sleep = sleep
        self._counter = RequestCounter()

    @property
    def requests(self) -> int:
        """HTTP requests this thread has sent (retries included)."""
        return self._counter.value

    def get_json(self, params: dict[str, Any]) -> dict[str, Any]:
        """Send one API request (retrying transient failures) and return its JSON."""
        reason = "no attempt made"
        for attempt in range(self.retries + 1):
            self._counter.add()
            wait: float | None = None
            try:
                reply = self.session.get(
                    self.api_url,
                    params=params,
                    headers={"User-Agent": USER_AGENT},
                    timeout=self.timeout_s,
                )
            except requests.Timeout:
                reason = f"timeout after {self.timeout_s:g} s"
            except requests.RequestException as exc:
                reason = f"cannot connect: {type(exc).__name__}"
            else:
                if reply.status_code in RETRYABLE_STATUS:
                    reason = f"HTTP {reply.status_code}"
                    wait = _retry_after(reply)
                elif reply.status_code != 200:
                    raise WikiUnavailableError(
                        f"Wikipedia refused the request (HTTP {reply.status_code})."
                    )
                else:
                    try:
                        data = reply.json()
                    except ValueError:
                        reason = "the reply was not valid JSON"
                    else:
                        if isinstance(data, dict) and "error" not in data:
                            return data
                        info = (
                            data.get("error", {}).get("info", "") if isinstance(data, dict) else ""
                        )
                        raise WikiUnavailableError(f"Wikipedia answered with an error: {info}.")
            if attempt < self.retries:
                backoff = min(self.max_backoff_s, self.backoff_s * 2**attempt)
                self.sleep(wait if wait is not None else backoff * (0.5 + random.random()))
        raise WikiUnavailableError(f"Wikipedia is unavailable right now ({reason}).")


def _retry_after(reply: requests.Response) -> float | None:
    value = reply.headers.get("Retry-After", "")
    try:
        return min(float(value), 30.0) if value else None
    except ValueError:
        return None


_active_transport: contextvars.ContextVar[Transport] = contextvars.ContextVar("wikireact_transport")


def _dispatch(params: dict[str, Any]) -> dict[str, Any]:
    """Replace `wikipedia.wikipedia._wiki_request`, routing to the active transport."""
    transport = _active_transport.get(None)
    if transport is None:
        transport = Transport()
    params = {**params, "format": "json"}
    params.setdefault("action", "query")
    return transport.get_json(params)


wikipedia_module._wiki_request = _dispatch
wikipedia_module.API_URL = API_URL


class LiveSource:
    """Pages and searches from the live MediaWiki API."""

    def __init__(self, transport: Transport | None = None) -> None:
        """Use `transport` (default: en.wikipedia.org over https, 10 s timeout, 3 retries)."""
        self.transport = transport or Transport()

    @property
    def requests(self) -> int:
        """HTTP requests sent from the calling thread."""
        return self.transport.requests

    @contextmanager
    def _active(self) -> Iterator[None]:
        token = _active_transport.set(self.transport)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # bs4's GuessedAtParserWarning on disambiguations
                yield
        except WikiUnavailableError:
            raise
        except wikipedia.exceptions.HTTPTimeoutError:
            raise WikiUnavailableError(
                f"Wikipedia is unavailable right now (timeout after {self.transport.timeout_s:g} s)."
            ) from None
        except (
            KeyError,
            ValueError,
            TypeError,
            AttributeError,
            IndexError,
            AssertionError,
            wikipedia.exceptions.WikipediaException,
        ) as exc:
            raise WikiUnavailableError(
                f"Wikipedia sent a reply that could not be read ({type(exc).__name__})."
            ) from None
        finally:
            _active_transport.reset(token)

    def fetch(self, title: str) -> Page | Disambiguation | None:
        """Return the page with exactly this title (redirects followed, no auto-suggest)."""
        with self._active():
            try:
                page = wikipedia.page(title, auto_suggest=False, redirect=True)
                return Page(valid_unicode(page.title), valid_unicode(page.content))
            except wikipedia.exceptions.DisambiguationError as exc:
                return Disambiguation(
                    valid_unicode(str(exc.title)), [valid_unicode(str(o)) for o in exc.options]
                )
            except wikipedia.exceptions.PageError:
                return None

    def similar(self, query: str, limit: int = 5) -> list[str]:
        """Titles from the API's full-text search."""
        with self._active():
            # `.fn` bypasses the package's unbounded in-process memo: caching is the
            # SQLite cache's job, and a memo would hide requests from the counters.
            return [valid_unicode(str(t)) for t in wikipedia.search.fn(query, results=limit)]


class CachedSource:
    """A source whose every page and search is kept in a snapshot file (cache or recording).

    A title is fetched from `inner` at most once for the life of the file; misses and
    disambiguations are kept too. Failures are not cached.
    """

    def __init__(self, inner: WikiSource, store: SnapshotDatabase) -> None:
        """Serve from `store`, falling back to (and recording) `inner`."""
        self.inner = inner
        self.store = store

    @property
    def requests(self) -> int:
        """Requests the inner (live) source sent from the calling thread."""
        return self.inner.requests

    def close(self) -> None:
        """Close the file (and the inner source, if it can be closed)."""
        self.store.close()
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def fetch(self, title: str) -> Page | Disambiguation | None:
        """From the file if known, else from the inner source (then stored)."""
        with self._file_usable():
            known, result = self.store.lookup(title, fuzzy=False)
        if known:
            return result
        result = self.inner.fetch(title)
        if isinstance(result, Page):
            row = (result.title, "page", result.text)
        elif isinstance(result, Disambiguation):
            row = (result.title, "disambiguation", json.dumps(result.options, ensure_ascii=False))
        else:
            row = (title, "missing", "")
        redirect = [(title, "redirect", row[0])] if row[0] != title else []
        with self._file_usable():
            self.store.put_many([row, *redirect])  # one transaction
        return result

    def similar(self, query: str, limit: int = 5) -> list[str]:
        """Return recorded results for this query, else the inner source's (then recorded)."""
        with self._file_usable():
            recorded = self.store.recorded_search(query)
        if recorded is not None:
            return recorded[:limit]
        titles = self.inner.similar(query, limit)
        with self._file_usable():
            self.store.record_search(query, titles)
        return titles

    @contextmanager
    def _file_usable(self) -> Iterator[None]:
        """Turn a failure of the cache or recording file (e.g. a full disk) into an outage.

        Nothing is observed: the episode stops, resumably, and says which file failed.
        """
        try:
            yield
        except (sqlite3.Error, MalformedRowError) as exc:
            raise WikiUnavailableError(
                f"the page file {self.store.path} cannot be used ({exc})."
            ) from None
