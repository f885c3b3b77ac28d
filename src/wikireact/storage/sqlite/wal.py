"""Fold a SQLite file's write-ahead log into the database from a background thread.

By default SQLite checkpoints the WAL inside the commit that takes it past 1000 pages:
that commit copies the log into the database file and fsyncs both (~35 ms on our
machines), and the committing thread is the one saving an episode's checkpoint, so the
episode (and, in an evaluation, every episode sharing the connection) waits for it.
`WalCheckpointer` turns the automatic checkpoint off for one connection and runs the same
PASSIVE checkpoint from its own thread and connection, `interval_s` after a commit pokes
it (`poke`: the saver calls it after each commit), so commits in a burst share one
checkpoint and an idle store's thread sleeps without waking.

Durability is unchanged: with `synchronous=NORMAL` a commit is in the WAL when it returns
either way; a checkpoint only moves committed pages into the main file (closing the last
connection still folds the whole log in).

A PASSIVE checkpoint never starts the log over: SQLite reuses the log from its start only
when a commit finds every frame folded in, which a checkpoint running beside a busy writer
seldom leaves. A long episode's log grew without bound (160 MB beside a 10 MB database
after 2,400 steps), so once the log passes `RESTART_OVER` the thread runs a TRUNCATE
checkpoint instead: it waits up to `RESTART_WAIT_MS` for a commit under way, folds the
few frames left and empties the log, while commits wait for it (a sync of the database
file, once per ~16 MB of log: ~250 steps of a long episode).
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from contextlib import closing
from pathlib import Path

INTERVAL_S = 0.25
"""How often the background thread looks at the log (a stat; a checkpoint if it changed)."""
RESTART_OVER = 16 * 1024 * 1024
"""A log larger than this is folded in with TRUNCATE, which starts it over (see below)."""
RESTART_WAIT_MS = 200
"""How long a TRUNCATE checkpoint waits for a commit under way (then it is a PASSIVE one)."""


class WalCheckpointer:
    """Runs WAL checkpoints of the file behind `conn` from a background thread until closed."""

    def __init__(self, path: Path, conn: sqlite3.Connection, interval_s: float = INTERVAL_S):
        """Turn off `conn`'s automatic checkpoints and start folding `path`'s log in the background."""
        conn.execute("PRAGMA wal_autocheckpoint=0")
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(
            target=fold_while_open,
            args=(path, self._stop, interval_s, self._wake),
            name=f"wikireact-wal {path}",
            daemon=True,
        )
        self._thread.start()
        weakref.finalize(self, _stop_thread, self._stop, self._wake)  # dropped without close()

    def poke(self) -> None:
        """Say the log changed (a commit): the thread checkpoints `interval_s` later."""
        self._wake.set()

    def close(self) -> None:
        """Stop the background thread (waiting for a checkpoint in progress to end)."""
        _stop_thread(self._stop, self._wake)
        self._thread.join()


def _stop_thread(stop: threading.Event, wake: threading.Event) -> None:
    stop.set()
    wake.set()


def fold_while_open(
    path: Path, stop: threading.Event, interval_s: float, wake: threading.Event | None = None
) -> None:
    """Checkpoint `path` when its WAL changed, until `stop` or the file goes.

    With `wake`, a round runs `interval_s` after `wake` is set (and the thread sleeps until
    then); without it, every `interval_s`.
    """
    wal = Path(f"{path}-wal")
    seen: tuple[int, int] | None = None
    while True:
        if wake is not None:
            wake.wait()
            wake.clear()  # a commit from now on asks for another round
        if stop.wait(interval_s):
            return
        try:
            found = wal.stat()
        except OSError:
            if not path.exists():
                return  # the database is gone (e.g. a removed temporary directory)
            continue
        mark = (found.st_mtime_ns, found.st_size)
        if mark == seen:
            continue
        mode = "TRUNCATE" if found.st_size > RESTART_OVER else "PASSIVE"
        try:  # mode=rw: never create a database that was removed meanwhile
            with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)) as conn:
                conn.execute(f"PRAGMA busy_timeout={RESTART_WAIT_MS}")
                conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
        except sqlite3.Error:
            continue  # busy or gone: the next round tries again (or ends the thread)
        seen = mark
