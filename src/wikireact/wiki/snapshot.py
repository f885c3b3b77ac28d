"""A Wikipedia snapshot in one SQLite file, with an FTS5 index for `Similar:`.

It holds page texts, redirects, disambiguations and recorded searches. A page imported
with its source's sentence split (a dump's, HotpotQA's) holds one sentence per line and
`split = 1`, and Lookup uses that split. Schema 2 added the `split` column and the title
tables of `wikireact.wiki.title_search`; a schema-1 file gains them when it is opened for
writing, and is read as it is.

`SnapshotDatabase` reads and writes the file; `SnapshotSource` serves it as a `WikiSource`
(exact title first, then case/whitespace-insensitive). The live cache and the record
mode write the same format, so anything fetched live can be replayed offline.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wikireact._json_text import parse_json
from wikireact.errors import (
    ForeignFileError,
    JsonTextError,
    MalformedRowError,
    SnapshotError,
    WikiPageUnreadableError,
)
from wikireact.storage.sqlite.files import check_writable_as, read_untouched
from wikireact.wiki import title_search
from wikireact.wiki.base import Disambiguation, Page, RequestCounter

SCHEMA_VERSION = 2
MAX_REDIRECT_HOPS = 5
MARKER_TABLES = frozenset({"meta", "pages", "searches"})
"""A file holding these tables is a snapshot; any other non-empty file is refused for writing."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages(
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL UNIQUE,
    norm_title TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('page', 'redirect', 'disambiguation', 'missing')),
    body TEXT NOT NULL,
    split INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS pages_norm ON pages(norm_title);
CREATE TABLE IF NOT EXISTS searches(query TEXT PRIMARY KEY, titles TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS pages_fts USING fts5(
    title, body, content='pages', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
"""
Row = tuple[str, str, str] | tuple[str, str, str, bool]
"""`(title, kind, body)` or `(title, kind, body, split)`: see `SnapshotDatabase.put_many`."""


def normalize_title(title: str) -> str:
    """Case- and whitespace-insensitive form of a title (underscores count as spaces)."""
    return " ".join(title.replace("_", " ").split()).casefold()


class SnapshotDatabase:
    """Read/write access to one snapshot file (safe to share between threads)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        """Wrap an open connection; use `create` or `open_readonly`."""
        self.conn = conn
        self.path = path
        self._lock = threading.RLock()
        columns = {row[1] for row in conn.execute("PRAGMA table_info(pages)")}
        self._split = "split" if "split" in columns else "0"  # schema 1 read as it is
        self._titles = title_search.has_title_index(conn)

    @classmethod
    def create(cls, path: Path) -> SnapshotDatabase:
        """Open `path` for writing, creating the file and its schema if needed.

        An existing file must be empty or a snapshot: another program's database, a
        checkpoint file or a corrupt file is refused before anything is written to it.
        """
        try:
            check_writable_as(path, MARKER_TABLES)
            if path.is_file() and path.stat().st_size:  # refused versions leave it as it was
                read_untouched(path, lambda conn: _check_version(conn, path))
        except ForeignFileError as exc:
            raise SnapshotError(f"cannot write snapshot {path}: {exc}") from None
        except (sqlite3.Error, OSError) as exc:
            raise SnapshotError(f"cannot write snapshot {path}: {exc}") from None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            _create_or_upgrade(conn)
        except (sqlite3.Error, OSError) as exc:
            raise SnapshotError(f"cannot write snapshot {path}: {exc}") from None
        return cls(conn, path)

    @classmethod
    def open_readonly(cls, path: Path) -> SnapshotDatabase:
        """Open an existing snapshot for reading only.

        It is checked first through a connection that creates no file beside it, so a file
        that is refused (corrupt, not a snapshot) is left exactly as it was.
        """
        if not path.is_file():
            raise SnapshotError(f"snapshot not found: {path}")

        def check(conn: sqlite3.Connection) -> None:
            _check_version(conn, path)
            conn.execute("SELECT 1 FROM pages LIMIT 1").fetchall()

        try:
            read_untouched(path, check)
            conn = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30, check_same_thread=False
            )
            _check_version(conn, path)
            conn.execute("SELECT 1 FROM pages LIMIT 1").fetchall()
        except sqlite3.Error as exc:
            raise SnapshotError(f"{path} is not a readable wikireact snapshot ({exc})") from None
        return cls(conn, path)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self.conn.close()

    def meta(self, key: str) -> str | None:
        """Return a value of the snapshot's metadata (e.g. `snapshot_id`)."""
        with self._lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value."""
        with self._lock:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block as one write transaction: all of it is written, or none of it.

        Inside another `transaction` block the block joins it (the outer one commits).
        """
        with self._lock:
            if self.conn.in_transaction:
                yield
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:  # SQLite already rolled back after e.g. a full disk
                    self.conn.execute("ROLLBACK")
                raise

    def row(self, title: str, *, fuzzy: bool) -> tuple[str, str, str, int] | None:
        """`(title, kind, body, split)` for an exact title, else (if fuzzy) a normalized match."""
        columns = f"title, kind, body, {self._split}"
        with self._lock:
            found = self.conn.execute(
                f"SELECT {columns} FROM pages WHERE title = ?", (title,)
            ).fetchone()
            if found is None and fuzzy:
                found = self.conn.execute(
                    f"SELECT {columns} FROM pages WHERE norm_title = ? AND kind != 'missing' "
                    "ORDER BY kind = 'page' DESC, id LIMIT 1",
                    (normalize_title(title),),
                ).fetchone()
        if found is not None and not (
            all(isinstance(value, str) for value in found[:3]) and isinstance(found[3], int)
        ):
            kinds = ", ".join(type(value).__name__ for value in found)
            raise MalformedRowError(
                f"the row of {title!r} is not (text, text, text, int) ({kinds})"
            )
        return found

    def lookup(self, title: str, *, fuzzy: bool) -> tuple[bool, Page | Disambiguation | None]:
        """`(known, result)`: whether the title has a row, and the page it leads to.

        Redirects are followed exactly; a `missing` row is known and leads to None.
        """
        wanted = title
        for _ in range(MAX_REDIRECT_HOPS):
            row = self.row(wanted, fuzzy=fuzzy)
            if row is None:
                return wanted != title, None
            found_title, kind, body, split = row
            if kind == "page":
                sentences = tuple(body.split("\n")) if split and body else () if split else None
                return True, Page(found_title, body, sentences)
            if kind == "disambiguation":
                return True, Disambiguation(found_title, _titles(body, found_title))
            if kind == "missing":
                return True, None
            wanted, fuzzy = body, False
        return True, None

    def put_many(self, rows: Iterable[Row]) -> tuple[int, int]:
        """Insert or update rows in one transaction (or the open `transaction`); return (added, changed).

        The store must have been opened with `create` (schema 2). A row is `(title, kind, body)` or `(title, kind, body, split)`; `split` says the
        body holds the source's sentences, one per line.
        """
        added = changed = 0
        words: dict[str, int] = {}
        with self.transaction():
            for title, kind, body, *rest in rows:
                split = int(bool(rest and rest[0]))
                old = self.conn.execute(
                    "SELECT id, kind, body, split FROM pages WHERE title = ?", (title,)
                ).fetchone()
                if old is not None and tuple(old[1:]) == (kind, body, split):
                    continue
                if old is not None:
                    self._unindex(old[0], title, old[1], old[2])
                    self.conn.execute(
                        "UPDATE pages SET kind = ?, body = ?, split = ? WHERE id = ?",
                        (kind, body, split, old[0]),
                    )
                    row_id, changed = old[0], changed + 1
                else:
                    row_id = self.conn.execute(
                        "INSERT INTO pages(title, norm_title, kind, body, split) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (title, normalize_title(title), kind, body, split),
                    ).lastrowid
                    added += 1
                self._index(row_id, title, kind, body, old, words)
            if words and self._titles:
                title_search.add_title_words(self.conn, words.items())
        return added, changed

    def _index(
        self,
        row_id: int,
        title: str,
        kind: str,
        body: str,
        old: tuple[int, str, str, int] | None,
        words: dict[str, int],
    ) -> None:
        """Index a written row: its body (pages only) and its title (anything but `missing`)."""
        if kind == "page":
            self.conn.execute(
                "INSERT INTO pages_fts(rowid, title, body) VALUES (?, ?, ?)",
                (row_id, title, body),
            )
        was_titled = old is not None and old[1] != "missing"
        if not self._titles or was_titled == (kind != "missing"):
            return
        if was_titled:
            self.conn.execute(
                "INSERT INTO titles_fts(titles_fts, rowid, title) VALUES ('delete', ?, ?)",
                (row_id, title),
            )
            return
        self.conn.execute("INSERT INTO titles_fts(rowid, title) VALUES (?, ?)", (row_id, title))
        for word in set(title_search.words(title)):
            words[word] = words.get(word, 0) + 1

    def _unindex(self, row_id: int, title: str, kind: str, body: str) -> None:
        if kind == "page":
            self.conn.execute(
                "INSERT INTO pages_fts(pages_fts, rowid, title, body) VALUES ('delete', ?, ?, ?)",
                (row_id, title, body),
            )

    def recorded_search(self, query: str) -> list[str] | None:
        """Titles recorded for this exact search query, if it was recorded."""
        with self._lock:
            row = self.conn.execute(
                "SELECT titles FROM searches WHERE query = ?", (query,)
            ).fetchone()
        return _titles(row[0], query) if row else None

    def record_search(self, query: str, titles: list[str]) -> None:
        """Remember the titles a search returned."""
        with self._lock:
            self.conn.execute(
                "INSERT OR REPLACE INTO searches VALUES (?, ?)", (query, json.dumps(titles))
            )

    def similar_titles(self, query: str, limit: int) -> list[str]:
        """Titles closest to `query` (typos and missing words forgiven); else body matches.

        Page bodies are searched only when no title matches: ranking a million bodies by a
        common word costs a hundred milliseconds, and a near-miss title needs titles.
        """
        with self._lock:
            found = (
                title_search.TitleSearch(self.conn).similar(query, limit) if self._titles else []
            )
        return found or self.full_text_search(query, limit)

    def full_text_search(self, query: str, limit: int) -> list[str]:
        """Titles of pages matching any word of `query`, title matches weighted highest."""
        words = [w for w in _words(query) if w]
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        with self._lock:
            rows = self.conn.execute(
                "SELECT title FROM pages_fts WHERE pages_fts MATCH ? "
                "ORDER BY bm25(pages_fts, 10.0, 1.0) LIMIT ?",
                (match, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def content_hash(self) -> str:
        """Return a short hash of every row, identifying the snapshot's content."""
        digest = hashlib.sha256()
        with self._lock:
            for title, kind, body, split in self.conn.execute(
                f"SELECT title, kind, body, {self._split} FROM pages ORDER BY title"
            ):
                marker = "\x00split" if split else ""
                digest.update(f"{title}\x00{kind}\x00{body}{marker}\x01".encode())
        return digest.hexdigest()[:16]

    def count(self, kind: str = "page") -> int:
        """Return the number of rows of a kind."""
        with self._lock:
            return int(
                self.conn.execute("SELECT count(*) FROM pages WHERE kind = ?", (kind,)).fetchone()[
                    0
                ]
            )


def _titles(stored: object, key: str) -> list[str]:
    """Return a JSON list of titles stored in a row; anything else is a `MalformedRowError`."""
    try:
        titles = parse_json(stored) if isinstance(stored, str) else None
    except JsonTextError:
        titles = None
    if not isinstance(titles, list) or not all(isinstance(t, str) for t in titles):
        raise MalformedRowError(f"the titles stored for {key!r} are not a JSON list of text")
    return titles


def _words(text: str) -> Iterator[str]:
    current = []
    for ch in text:
        if ch.isalnum():
            current.append(ch)
        elif current:
            yield "".join(current)
            current = []
    if current:
        yield "".join(current)


def _create_or_upgrade(conn: sqlite3.Connection) -> None:
    """Create the schema, or bring a schema-1 file to schema 2 (a `split` column, title tables)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(pages)")}
    had_titles = title_search.has_title_index(conn)
    conn.execute("BEGIN IMMEDIATE")
    try:
        if columns and "split" not in columns:
            conn.execute("ALTER TABLE pages ADD COLUMN split INTEGER NOT NULL DEFAULT 0")
        for statement in (_SCHEMA + title_search.SCHEMA).split(";"):
            if statement.strip():
                conn.execute(statement)
        if columns and not had_titles:
            title_search.index_all_titles(conn)
        conn.execute(
            "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _check_version(conn: sqlite3.Connection, path: Path) -> None:
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row and not (isinstance(row[0], str) and row[0].isascii() and row[0].isdigit()):
        raise SnapshotError(
            f"{path} is not a snapshot wikireact can read: its schema_version is {row[0]!r}, "
            "not a whole number"
        )
    if row and int(row[0]) > SCHEMA_VERSION:
        raise SnapshotError(
            f"{path} was written by a newer wikireact (schema {row[0]}, this one reads "
            f"{SCHEMA_VERSION}); upgrade wikireact"
        )


class SnapshotSource:
    """A `WikiSource` served from a snapshot file, with no network."""

    def __init__(self, store: SnapshotDatabase) -> None:
        """Serve pages from `store`."""
        self.store = store
        self._counter = RequestCounter()

    @classmethod
    def open(cls, path: Path) -> SnapshotSource:
        """Open the snapshot at `path` read-only (close it, or use it in a `with` block)."""
        return cls(SnapshotDatabase.open_readonly(path))

    def close(self) -> None:
        """Close the snapshot file."""
        self.store.close()

    def __enter__(self) -> SnapshotSource:
        """Use the source for the block; it is closed at its end."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the snapshot file."""
        self.close()

    @property
    def requests(self) -> int:
        """Snapshot look-ups made (a snapshot never touches the network)."""
        return self._counter.value

    @property
    def snapshot_id(self) -> str | None:
        """The content hash recorded when the snapshot was built."""
        return self.store.meta("snapshot_id")

    @property
    def snapshot_source(self) -> Any:
        """Where the pages came from (the `source` metadata: JSON, or text for older files)."""
        text = self.store.meta("source")
        try:
            return json.loads(text) if text is not None else None
        except ValueError:
            return text

    def fetch(self, title: str) -> Page | Disambiguation | None:
        """Exact title first, then case/whitespace-insensitive; redirects followed."""
        self._counter.add()
        with self._readable():
            return self.store.lookup(title, fuzzy=True)[1]

    def similar(self, query: str, limit: int = 5) -> list[str]:
        """Return recorded results for this query if any, else full-text search."""
        self._counter.add()
        with self._readable():
            recorded = self.store.recorded_search(query)
            if recorded is not None:
                return recorded[:limit]
            return self.store.similar_titles(query, limit)

    @contextmanager
    def _readable(self) -> Iterator[None]:
        """Turn a failure to read the file (a corrupt page, an I/O error) into `WikiPageUnreadableError`."""
        try:
            yield
        except (sqlite3.Error, ValueError) as exc:  # ValueError: a malformed JSON value in a row
            raise WikiPageUnreadableError(
                f"The snapshot could not be read here ({str(exc).strip() or type(exc).__name__})."
            ) from None
