"""The repetition rule: a step is a repeat when it cannot make progress.

The environment is deterministic, so an action's result depends only on the action and
the environment state it meets: the open page (or none) and, for Lookup, how many of the
keyword's matches were shown. A *state key* names an action in that state; a step whose
key was proposed before already has its result in the history, so it is not executed.

- `Lookup[k]` with matches left advances its cursor, so its key (which holds the cursor)
  is new; after `No more results.` the cursor stays and the same Lookup is a repeat.
- `Search[t]` is keyed by the page open when it is proposed, so going back to an earlier
  page is allowed, and an A-B-A-B cycle is caught at its fourth step. A Search naming
  the page already open is a repeat of the Search that opened it.
- `Finish` is never a repeat.
"""

from __future__ import annotations

from collections.abc import Mapping

from wikireact.state import ActionDict, State
from wikireact.wiki.environment import lookup_key

NO_PAGE = "-"


def canonical_title(title: str) -> str:
    """Return a title as MediaWiki compares it: spaces collapsed, first letter upper case."""
    text = " ".join(title.replace("_", " ").split())
    return text[:1].upper() + text[1:]


def search_key(argument: str, open_page: str | None) -> str:
    """Return the state key of `Search[argument]` proposed while `open_page` is open."""
    return f"Search[{canonical_title(argument)}] on {open_page or NO_PAGE}"


def state_key(action: ActionDict, state: State) -> str | None:
    """Return the key of `action` in the episode's current environment state (None for Finish)."""
    page = state.get("page_title")
    if action["name"] == "Search":
        page_key = state.get("page_key")
        if (
            page is not None
            and page_key is not None
            and _names_open_page(action["argument"], page, page_key)
        ):
            return page_key
        return search_key(action["argument"], page)
    if action["name"] == "Lookup":
        keyword = lookup_key(action["argument"])
        shown = (state.get("lookup_cursors") or {}).get(keyword, 0) if page is not None else 0
        return f"Lookup[{keyword}] on {page or NO_PAGE} after {shown}"
    return None


def earlier_step(key: str | None, proposals: Mapping[str, list[int]]) -> int | None:
    """Return the first step that proposed `key`, or None if it is new."""
    steps = proposals.get(key, []) if key is not None else []
    return steps[0] if steps else None


def times_proposed(key: str | None, proposals: Mapping[str, list[int]]) -> int:
    """Return how many steps proposed `key` so far."""
    return len(proposals.get(key, [])) if key is not None else 0


def _names_open_page(argument: str, page: str, page_key: str) -> bool:
    """Whether `Search[argument]` would open the page that is open now."""
    title = canonical_title(argument)
    return title == canonical_title(page) or page_key.startswith(f"Search[{title}] on ")
