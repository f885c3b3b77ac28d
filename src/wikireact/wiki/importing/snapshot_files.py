"""Open the file a `snapshot import` writes: a new snapshot appears only when it is complete.

A new snapshot is built under a temporary name beside `--out` (`.NAME.importing-PID`)
and renamed to `--out` when the import succeeded, so Ctrl-C, a crash or SIGKILL never
leaves a half-built file under the final name. Ctrl-C and errors remove the temporary
file; after a SIGKILL the next import to the same `--out` removes it (its process is
gone). An interrupted import starts over: resuming would need to know which rows of the
last file made it, and a fresh build of the whole 2017 dump takes minutes, not hours.
An existing snapshot is extended in one transaction: a failure leaves it as it was.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wikireact.errors import SnapshotError
from wikireact.storage.sqlite.files import remove_database
from wikireact.wiki.snapshot import SnapshotDatabase

BUILD_MARK = ".importing-"


def temporary_name(out: Path, pid: int) -> Path:
    """Return where process `pid` builds the new snapshot `out`."""
    return out.with_name(f".{out.name}{BUILD_MARK}{pid}")


def remove_abandoned_builds(out: Path) -> None:
    """Remove temporary files of imports to `out` whose process no longer runs."""
    for path in out.parent.glob(f".{out.name}{BUILD_MARK}*"):
        pid_text = path.name.rsplit(BUILD_MARK, 1)[1].split("-", 1)[0]
        if pid_text.isdigit() and not _running(int(pid_text)):
            remove_database(path)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def snapshot_for_import(out: Path) -> Iterator[tuple[SnapshotDatabase, bool]]:
    """Yield `(store, new)`: a temporary new snapshot renamed to `out` at the end, or `out` itself."""
    if out.exists():
        store = SnapshotDatabase.create(out)
        try:
            yield store, False
        finally:
            store.conn.close()
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SnapshotError(f"cannot write snapshot {out}: {exc.strerror or exc}") from None
    remove_abandoned_builds(out)
    temp = temporary_name(out, os.getpid())
    store = SnapshotDatabase.create(temp)
    store.path = out  # messages name the file the user asked for
    try:
        yield store, True
        store.conn.execute("PRAGMA journal_mode=DELETE")
        store.conn.close()
        with temp.open("rb") as handle:
            os.fsync(
                handle.fileno()
            )  # a bulk import writes without syncing: sync before the rename
        os.replace(temp, out)
    except BaseException:
        store.conn.close()
        remove_database(temp)
        raise
