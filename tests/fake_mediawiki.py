"""A stand-in for the MediaWiki Action API (formatversion=1), per its documented contract.

`FakeMediaWiki.reply(params)` returns the JSON the real API returns for the requests the
`wikipedia` package sends; tests serve it through `responses` (transport level) so the
real code path, from `wikipedia.page` down to `requests`, runs unchanged.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from wikireact.wiki.live import API_URL, LiveSource, Transport


@dataclass
class FakeMediaWiki:
    pages: dict[str, str] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    disambiguations: dict[str, list[str]] = field(default_factory=dict)
    search_results: dict[str, list[str]] = field(default_factory=dict)
    calls: list[dict[str, str]] = field(default_factory=list)

    def _id(self, title: str) -> str:
        known = sorted(set(self.pages) | set(self.disambiguations))
        return str(1000 + known.index(title))

    def reply(self, params: dict[str, str]) -> dict[str, Any]:
        self.calls.append(params)
        if params.get("list") == "search":
            limit = int(params.get("srlimit", 10))
            titles = self.search_results.get(params["srsearch"], [])[:limit]
            return {
                "batchcomplete": "",
                "query": {
                    "searchinfo": {"totalhits": len(titles)},
                    "search": [{"ns": 0, "title": t} for t in titles],
                },
            }
        title = params["titles"]
        query: dict[str, Any] = {}
        if title in self.redirects and "redirects" in params:
            query["redirects"] = [{"from": title, "to": self.redirects[title]}]
            title = self.redirects[title]
        if title not in self.pages and title not in self.disambiguations:
            query["pages"] = {"-1": {"ns": 0, "title": title, "missing": ""}}
            return {"batchcomplete": "", "query": query}
        pageid = self._id(title)
        page: dict[str, Any] = {"pageid": int(pageid), "ns": 0, "title": title}
        prop = params.get("prop", "")
        if prop == "info|pageprops":
            page["fullurl"] = f"https://en.wikipedia.org/wiki/{title.replace(' ', '_')}"
            if title in self.disambiguations:
                page["pageprops"] = {"disambiguation": ""}
        elif prop == "revisions" and "rvparse" in params:
            items = "".join(
                f'<li><a href="/wiki/{html.escape(o)}" title="{html.escape(o)}">{html.escape(o)}</a>, a thing</li>'
                for o in self.disambiguations[title]
            )
            page["revisions"] = [
                {"*": f"<p><b>{html.escape(title)}</b> may refer to:</p><ul>{items}</ul>"}
            ]
        elif prop == "extracts|revisions":
            page["extract"] = self.pages[title]
            page["revisions"] = [{"revid": 1, "parentid": 0}]
        query["pages"] = {pageid: page}
        return {"batchcomplete": "", "query": query}


URL = re.compile(re.escape(API_URL) + r".*")
"""Every request to the MediaWiki API (for `responses`)."""


def no_sleep(_: float) -> None:
    """Retry at once (tests do not wait for backoff)."""


def live(**kw: Any) -> LiveSource:
    """The live source over `requests` (faked by `responses`), retrying without sleeping."""
    return LiveSource(Transport(sleep=no_sleep, **kw))
