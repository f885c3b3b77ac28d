"""Decide, before writing anything, whether a SQLite file may be opened for writing.

wikireact writes only to files that are new, empty, or already its own (they hold its
marker tables). Anything else (another program's database, a wikireact file of the
other kind, a file that is not SQLite or cannot be read) is refused with one line and
left byte-identical: the check reads the file read-only, with no journal-mode switch,
no `user_version` and no tables written.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from wikireact.errors import ForeignFileError

SQLITE_HEADER = b"SQLite format 3\x00"
T = TypeVar("T")


def check_writable_as(path: Path, marker_tables: frozenset[str]) -> None:
    """Raise ForeignFileError unless `path` is missing, empty, or holds every one of `marker_tables`.

    Args:
        path: the SQLite file about to be opened for writing.
        marker_tables: tables only wikireact's files of this kind hold, e.g.
            `{"wikireact_threads"}` for a checkpoint file.
    """
    try:
        if not path.exists():
            return
        if not path.is_file():
            raise ForeignFileError("it is not a regular file")
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise ForeignFileError(f"it cannot be read ({exc.strerror or exc})") from None
    if not header:
        return  # an empty file: SQLite makes it a database on the first write
    if header != SQLITE_HEADER:
        raise ForeignFileError("it is not a SQLite database; wikireact leaves it untouched")
    names, tables, user_version = _schema(path)
    if marker_tables <= tables:
        return
    if not names and user_version == 0:
        return  # a database with nothing in it yet
    shown = ", ".join(sorted(tables)[:6]) or "no tables"
    raise ForeignFileError(
        f"it is another program's SQLite database ({shown}); wikireact leaves it untouched: "
        "use another file"
    )


def remove_database(path: Path) -> None:
    """Delete a database file wikireact created, with its journal, WAL and shared-memory files."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def read_untouched(
    path: Path, read: Callable[[sqlite3.Connection], T], *, keep_open: bool = False
) -> T:
    """Return `read(connection)` on a read-only connection that creates no file beside `path`.

    With no `-wal` or `-journal` beside it, no connection is writing the file, so it is
    read as immutable: an ordinary read-only connection to a WAL-mode file would create
    `-wal` and `-shm` files (and leave them if the file is refused). If that read fails and
    a writer has appeared meanwhile (its `-wal` or `-journal` is there now), the file is
    read the ordinary way, beside the writer's own files; otherwise the error is raised.
    With `keep_open` the connection stays open after a successful `read` (which may return
    it), for a reader that goes on reading.

    Raises:
        sqlite3.Error: the file cannot be read (corrupt, not SQLite, unreadable).
    """
    immutable = not _has_sidecars(path)
    while True:
        mode = "mode=ro&immutable=1" if immutable else "mode=ro"
        try:
            conn = sqlite3.connect(
                f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=30, check_same_thread=False
            )
            try:
                result = read(conn)
            except BaseException:
                conn.close()
                raise
            if not keep_open:
                conn.close()
            return result
        except sqlite3.Error:
            if not immutable:
                raise
            time.sleep(0.05)  # a writer that was starting has made its -wal/-journal by now
            if not _has_sidecars(path):
                raise
            immutable = False


def _has_sidecars(path: Path) -> bool:
    return any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-journal"))


def _schema(path: Path) -> tuple[set[str], set[str], int]:
    """Return the names of all schema objects, of the tables, and the user_version, read-only."""

    def read(conn: sqlite3.Connection) -> tuple[list[Any], int]:
        rows = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
        return rows, int(conn.execute("PRAGMA user_version").fetchone()[0])

    try:
        rows, user_version = read_untouched(path, read)
    except sqlite3.Error as exc:
        raise ForeignFileError(f"it is not a readable SQLite database ({exc})") from None
    return (
        {str(name) for _, name in rows},
        {str(name) for kind, name in rows if kind == "table"},
        user_version,
    )
