"""Build snapshots from HotpotQA-format JSON and `{"title", "text"}` JSONL, streaming.

Both readers hold one record at a time (HotpotQA's JSON array is read item by item,
`wikireact.wiki.importing.safe_json`), so a 1 GB file does not need 1 GB of memory, and hostile
JSON (deep nesting, huge numbers, giant lines) is refused in one line naming the file. An import is one
transaction: a malformed file changes nothing. Importing is idempotent: a page already
present with the same text is left alone.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from wikireact.errors import SnapshotError
from wikireact.wiki.importing import safe_json
from wikireact.wiki.snapshot import SnapshotDatabase


@dataclass
class ImportStats:
    """What an import did."""

    read: int = 0
    added: int = 0
    changed: int = 0

    @property
    def unchanged(self) -> int:
        """Pages read that were already present with the same text."""
        return self.read - self.added - self.changed


def iter_pages(path: Path) -> Iterator[tuple[str, str, bool]]:
    """Yield `(title, text, split)` from a .jsonl file or a HotpotQA-format .json file.

    `split` is True when the text is the source's sentences, one per line (HotpotQA's).
    """
    if not path.is_file():
        raise SnapshotError(f"input file not found: {path}")
    if path.suffix == ".jsonl":
        yield from _iter_jsonl(path)
    else:
        yield from _iter_hotpot(path)


def _iter_jsonl(path: Path) -> Iterator[tuple[str, str, bool]]:
    with path.open("rb") as handle:
        for number, line in enumerate(_bounded_lines(handle, path), start=1):
            if not line.strip():
                continue
            try:
                record = safe_json.loads(line.decode("utf-8"))
                title, text = record["title"], record["text"]
            except (UnicodeDecodeError, safe_json.JsonValueError, KeyError, TypeError) as exc:
                raise SnapshotError(
                    f'{path}:{number}: not a {{"title", "text"}} record ({exc})'
                ) from None
            if not isinstance(title, str) or not isinstance(text, str) or not title.strip():
                raise SnapshotError(f"{path}:{number}: title and text must be non-empty strings")
            yield title.strip(), text, False


def _iter_hotpot(path: Path) -> Iterator[tuple[str, str, bool]]:
    with path.open("rb") as handle:
        if _first_byte(handle) != b"[":
            raise SnapshotError(
                f"{path} is not a HotpotQA file: its JSON is not a list of items "
                '(for {"title", "text"} records, use a .jsonl file)'
            )
        for number, item in enumerate(safe_json.iter_array(handle, str(path)), start=1):
            context = item.get("context") if isinstance(item, dict) else None
            if not isinstance(context, list):
                raise SnapshotError(f'{path}: item {number} is not an object with a "context" list')
            for entry in context:
                if (
                    not isinstance(entry, list)
                    or len(entry) != 2
                    or not isinstance(entry[0], str)
                    or not isinstance(entry[1], list)
                ):
                    raise SnapshotError(
                        f"{path}: item {number}: context entries must be [title, [sentences]]"
                    )
                title, sentences = entry
                if not title.strip():
                    raise SnapshotError(
                        f"{path}: item {number}: a context entry has an empty title"
                    )
                lines = (" ".join(str(s).split()) for s in sentences)
                yield title.strip(), "\n".join(line for line in lines if line), True


def _bounded_lines(handle: BinaryIO, path: Path) -> Iterator[bytes]:
    """Yield the lines of `handle`, refusing one longer than `safe_json.MAX_VALUE_BYTES`."""
    number = 0
    while line := handle.readline(safe_json.MAX_VALUE_BYTES + 1):
        number += 1
        if len(line) > safe_json.MAX_VALUE_BYTES:
            raise SnapshotError(f"{path}:{number}: a line longer than 64 MiB")
        yield line


def _first_byte(handle: BinaryIO) -> bytes:
    """Return the first byte that is not whitespace, leaving the handle at the start."""
    head = handle.read(4096)
    handle.seek(0)
    return head.lstrip()[:1]


def import_file(path: Path, store: SnapshotDatabase) -> ImportStats:
    """Import every page of `path` into `store` with the new snapshot id, in one transaction.

    Inside an open `store.transaction()` it joins that one (the import commits with it).
    """
    stats = ImportStats()

    def rows() -> Iterator[tuple[str, str, str, bool]]:
        for title, text, split in iter_pages(path):
            stats.read += 1
            yield title, "page", text, split

    try:
        with store.transaction():
            stats.added, stats.changed = store.put_many(rows())
            store.set_meta("snapshot_id", store.content_hash())
    except sqlite3.Error as exc:  # e.g. a full disk: the transaction was rolled back
        raise SnapshotError(f"cannot import {path} into {store.path}: {exc}") from None
    return stats


def source_entry(path: Path, stats: ImportStats) -> dict[str, object]:
    """Describe an imported file for the snapshot's `source` metadata."""
    listing = f"{path.name}\t{path.stat().st_size}\n".encode()
    return {
        "source": "jsonl" if path.suffix == ".jsonl" else "hotpotqa-json",
        "files": 1,
        "pages": stats.read,
        "file_list_sha256": hashlib.sha256(listing).hexdigest(),
    }
