"""Open the file a `snapshot import` writes: all of an import is kept, or none of it.

A new snapshot is built under a temporary name beside `--out` (`.NAME.importing-PID`),
locked (`flock`) while the import runs, and linked to `--out` when the import succeeded,
never over a file: an import started while another builds the same `--out` is refused at
once, and one that finishes second (both started at the same moment) is refused then.
Ctrl-C, a crash or SIGKILL never leave a half-built file under the final name. Ctrl-C and
errors remove the temporary file; after a SIGKILL the next import to the same `--out`
removes it (its lock is gone with its process). An interrupted import starts over:
resuming would need to know which rows of the last file made it, and a fresh build of the
whole 2017 dump takes minutes, not hours.

An existing snapshot is extended in one transaction for all the inputs: pages, the
snapshot id and the `source` metadata go in together, and a failure or Ctrl-C leaves it
as it was. `ImportTarget.written` tells whether an interruption came after the import
had been kept (between its last write and the message).
"""

from __future__ import annotations

import fcntl
import glob
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from wikireact.errors import SnapshotError
from wikireact.storage.sqlite.files import remove_database
from wikireact.wiki.snapshot import SnapshotDatabase

BUILD_MARK = ".importing-"


def temporary_name(out: Path, pid: int) -> Path:
    """Return where process `pid` builds the new snapshot `out`."""
    return out.with_name(f".{out.name}{BUILD_MARK}{pid}")


class ImportTarget:
    """The snapshot file an import writes (`open`), and whether it was kept (`written`)."""

    def __init__(self, out: Path) -> None:
        """Write to `out` (created, or extended if it exists when `open` is entered)."""
        self.out = out
        self._built: tuple[int, int] | None = None
        """Device and inode of this import's new file, once it is being built."""
        self._source_before: tuple[str | None] | None = None
        """The extended file's `source` metadata before the import (every import adds to it)."""

    @contextmanager
    def open(self) -> Iterator[tuple[SnapshotDatabase, bool]]:
        """Yield `(store, new)`: a new snapshot named `out` at the end, or `out` in one transaction."""
        if self.out.exists():
            store = SnapshotDatabase.create(self.out)
            with closing(store.conn), _database_errors(self.out):
                self._source_before = (store.meta("source"),)
                with store.transaction():
                    yield store, False
            return
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SnapshotError(
                f"cannot write snapshot {self.out}: {exc.strerror or exc}"
            ) from None
        temp, lock = _claim(self.out)
        try:
            stat = os.fstat(lock)
            self._built = (stat.st_dev, stat.st_ino)
            store = SnapshotDatabase.create(temp)
            store.path = self.out  # messages name the file the user asked for
            with closing(store.conn), _database_errors(self.out):
                yield store, True
                store.conn.execute("PRAGMA journal_mode=DELETE")
            os.fsync(lock)  # a bulk import writes without syncing: sync before the link
            _publish(temp, self.out)
        except BaseException:
            remove_database(temp)  # only its name, if it was published meanwhile
            raise
        finally:
            os.close(lock)

    def written(self) -> bool:
        """Whether `out` now holds this import (an interruption came after it was kept)."""
        if self._built is not None:
            try:
                stat = self.out.stat()
            except OSError:
                return False
            return (stat.st_dev, stat.st_ino) == self._built
        if self._source_before is None:
            return False
        try:
            with closing(SnapshotDatabase.open_readonly(self.out)) as store:
                return (store.meta("source"),) != self._source_before
        except SnapshotError:
            return False


@contextmanager
def _database_errors(out: Path) -> Iterator[None]:
    """Turn a database error outside any one input (a lock, a full disk at commit) into one line."""
    try:
        yield
    except sqlite3.Error as exc:
        raise SnapshotError(f"cannot write snapshot {out}: {exc}") from None


def _claim(out: Path) -> tuple[Path, int]:
    """Create this process's build file for `out` and lock it; return it and the lock's descriptor.

    Refuses if another import is building `out` (its build file is locked); removes the
    build files of imports whose process is gone.
    """
    for path in out.parent.glob(f".{glob.escape(out.name)}{BUILD_MARK}*"):
        rest = path.name.rsplit(BUILD_MARK, 1)[1]
        pid = rest.split("-", 1)[0]  # `-wal`, `-journal` files carry their database's PID
        if rest.isdigit() and _locked(path):
            raise SnapshotError(
                f"another import (process {pid}) is building {out}: run this one again "
                "when it has finished, to add to it"
            )
        if pid.isdigit() and not _running(int(pid)):
            remove_database(path)
    temp = temporary_name(out, os.getpid())
    remove_database(temp)  # unlocked, so left by an earlier process that had this PID
    try:
        lock = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as exc:
        raise SnapshotError(f"cannot write snapshot {out}: {exc.strerror or exc}") from None
    fcntl.flock(lock, fcntl.LOCK_EX)
    return temp, lock


def _locked(path: Path) -> bool:
    """Whether a running import holds the build file `path` locked."""
    try:
        probe = os.open(path, os.O_RDONLY)
    except OSError:
        return False  # removed meanwhile
    try:
        fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(probe)
    return False


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _publish(temp: Path, out: Path) -> None:
    """Give the finished build the name `out`, unless another import gave `out` a file meanwhile."""
    try:
        os.link(temp, out)
    except FileExistsError:
        raise _taken(out) from None
    except OSError:  # a file system without hard links: check, then rename
        if out.exists():
            raise _taken(out) from None
        os.replace(temp, out)
    else:
        temp.unlink()


def _taken(out: Path) -> SnapshotError:
    return SnapshotError(
        f"another import wrote {out} while this one ran, so this one was not kept: "
        "run it again to add to it"
    )
