"""Open a Wikipedia source from its name: `live`, `offline`, `record:PATH.db` or `PATH.db`.

`open_source` shares one open source per name within the process (the served graph opens
its source per run; an evaluation's workers share theirs). The registry owns them: it
keeps the `SHARED_SOURCES` most recently used (one dropped earlier is closed once nothing
uses it any more) and `close_sources` closes them all (a host shutting down, a test).
A source of one's own is opened directly and closed with `with` (`SnapshotSource.open`).
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from pathlib import Path

from wikireact._paths import cache_dir
from wikireact.errors import WikiConfigurationError
from wikireact.storage.postgres.url import redacted
from wikireact.wiki.base import WikiSource


def default_cache_path() -> Path:
    """Return the on-disk cache of live pages and searches, shared by the CLI and the eval."""
    return cache_dir() / "live-cache.db"


SHARED_SOURCES = 16
"""How many shared sources stay open (the most recently used)."""
_shared: OrderedDict[str, WikiSource] = OrderedDict()
_shared_lock = threading.Lock()


def open_source(spec: str) -> WikiSource:
    """Return the source named by `spec` (opened once per process and shared)."""
    with _shared_lock:
        source = _shared.get(spec)
        if source is not None:
            _shared.move_to_end(spec)
            return source
    source = _open(spec)
    with _shared_lock:
        source = _shared.setdefault(spec, source)  # another thread's, if it was first
        _shared.move_to_end(spec)
        while len(_shared) > SHARED_SOURCES:
            # Not closed here: a caller may still be using it (it closes when unreferenced).
            _shared.popitem(last=False)
    return source


def close_sources() -> None:
    """Close every shared source and forget it; the next `open_source` opens afresh."""
    with _shared_lock:
        sources = list(_shared.values())
        _shared.clear()
    for source in sources:
        close = getattr(source, "close", None)
        if callable(close):
            close()


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:/")
"""A URL's start; `Path` turns the `//` of `postgresql://user:PW@host/db` into `/`."""


def shown_if_url(text: str) -> str | None:
    """Return `text` as a message may show it (no password) if it is a URL, else None.

    A URL is never a file: a wiki source, a snapshot to write or an input to import.
    """
    stripped = text.strip()
    if not _URL.match(stripped):
        return None
    scheme, _, rest = stripped.partition(":")
    return redacted(f"{scheme}://{rest.lstrip('/')}")


def _open(spec: str) -> WikiSource:
    from wikireact.wiki.snapshot import SnapshotSource

    spec = spec.strip()
    shown = shown_if_url(spec.removeprefix("record:"))
    if shown is not None:
        raise WikiConfigurationError(
            f"unknown wiki source {shown!r}: a URL is not a wiki source; "
            "use live, offline, record:PATH.db or a snapshot PATH.db"
        )
    if spec == "live":
        return _cached_live(default_cache_path())
    if spec.startswith("record:"):
        return _cached_live(Path(spec.removeprefix("record:")))
    if spec == "offline":
        from wikireact.wiki.offline_corpus import ensure_offline_snapshot

        return SnapshotSource.open(ensure_offline_snapshot())
    if spec.endswith(".db") or Path(spec).exists():
        return SnapshotSource.open(Path(spec))
    raise WikiConfigurationError(
        f"unknown wiki source {spec!r}: use live, offline, record:PATH.db or a snapshot PATH.db"
    )


def absolute_wiki_spec(spec: str) -> str:
    """Return `spec` with a snapshot or recording path made absolute (`live`, `offline` unchanged).

    Threads store their settings; a relative path would name another file (or none)
    when the thread is resumed from another directory.
    """
    stripped = spec.strip()
    if stripped in ("live", "offline") or shown_if_url(stripped.removeprefix("record:")):
        return spec  # a URL is refused when it is opened, as it was given
    if stripped.startswith("record:"):
        return "record:" + os.path.abspath(stripped.removeprefix("record:"))
    if stripped.endswith(".db") or Path(stripped).exists():
        return os.path.abspath(stripped)
    return spec


def _cached_live(path: Path) -> WikiSource:
    from wikireact.wiki.live import CachedSource, LiveSource
    from wikireact.wiki.snapshot import SnapshotDatabase

    return CachedSource(LiveSource(), SnapshotDatabase.create(path))
