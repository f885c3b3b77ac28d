"""Open a Wikipedia source from its name: `live`, `offline`, `record:PATH.db` or `PATH.db`."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from wikireact._paths import cache_dir
from wikireact.errors import WikiConfigurationError
from wikireact.wiki.base import WikiSource


def default_cache_path() -> Path:
    """Return the on-disk cache of live pages and searches, shared by the CLI and the eval."""
    return cache_dir() / "live-cache.db"


@functools.lru_cache(maxsize=16)
def open_source(spec: str) -> WikiSource:
    """Return the source named by `spec` (opened once per process and shared)."""
    from wikireact.wiki.snapshot import SnapshotSource

    spec = spec.strip()
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
    if stripped in ("live", "offline"):
        return spec
    if stripped.startswith("record:"):
        return "record:" + os.path.abspath(stripped.removeprefix("record:"))
    if stripped.endswith(".db") or Path(stripped).exists():
        return os.path.abspath(stripped)
    return spec


def _cached_live(path: Path) -> WikiSource:
    from wikireact.wiki.live import CachedSource, LiveSource
    from wikireact.wiki.snapshot import SnapshotDatabase

    return CachedSource(LiveSource(), SnapshotDatabase.create(path))
