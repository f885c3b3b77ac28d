"""Import a HotpotQA 2017 abstracts dump: parsed on all cores, written by this process.

Worker processes (one per usable core, `worker_count`) decompress and parse the dump's files
(`wikireact.wiki.importing.dump_records`); this process writes their rows in file order, so the
same dump always gives the same snapshot. At most `WINDOW_PER_WORKER` units per worker
are in flight, so memory stays flat however large the dump is.

Into a new snapshot (`bulk=True`, a file no one else reads yet) rows go in with
SQLite's journal off, and the full-text and title indexes are built once at the end
(sorted bulk inserts instead of millions of random ones). Into an existing snapshot
they go through `SnapshotDatabase.put_many`, like any other import, and the pages, the
disambiguations' options, the snapshot id and the `source` metadata go in together, in
one transaction. A database error (a full disk) is a `SnapshotError` naming the dump.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from multiprocessing.pool import AsyncResult
from pathlib import Path

from wikireact.errors import SnapshotError
from wikireact.wiki import title_search
from wikireact.wiki.importing.dump_files import WHOLE_FILE_LIMIT, Dump, Unit, decompress
from wikireact.wiki.importing.dump_records import DISAMBIGUATION_SUFFIX, Parsed, Row, parse_lines
from wikireact.wiki.snapshot import SnapshotDatabase, normalize_title

SOURCE_NAME = "hotpotqa-abstracts-2017"
MAX_UNIT_BYTES = 128 * 2**20
"""A whole-file unit decompressing to more than this is refused (a bz2 bomb)."""
WINDOW_PER_WORKER = 3
MAX_OPTIONS = 50


@dataclass
class DumpStats:
    """Progress and outcome of a dump import."""

    files: int
    bytes_total: int
    workers: int = 1
    """Parsing processes used."""
    files_done: int = 0
    bytes_done: int = 0
    pages: int = 0
    bad_lines: int = 0
    damaged_files: int = 0
    examples: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    @property
    def elapsed(self) -> float:
        """Seconds since the import started."""
        return time.monotonic() - self.started


Progress = Callable[[DumpStats], None]


def import_dump(
    path: Path,
    store: SnapshotDatabase,
    *,
    bulk: bool,
    skip_bad_lines: bool = False,
    workers: int | None = None,
    progress: Progress | None = None,
) -> DumpStats:
    """Import the dump at `path` (tree, `.bz2` or `.tar.bz2`) into `store`.

    `bulk` is for a store just created for this import (it is written without a
    journal: a failure must discard the file); `workers` is capped by `worker_count`.
    Raises `SnapshotError` naming the file and line of the first bad line or damaged
    file unless `skip_bad_lines`, or naming the dump when the database cannot be written.
    """
    dump = Dump(path)
    count = worker_count(workers, dump)
    stats = DumpStats(files=len(dump.files), bytes_total=dump.total_bytes, workers=count)
    try:
        with (
            multiprocessing.get_context("fork").Pool(count, initializer=_quiet_worker) as pool,
            nullcontext() if bulk else store.transaction(),
        ):
            batches = _parsed_batches(dump, pool, count, stats, skip_bad_lines, progress)
            store.conn.execute("CREATE TEMP TABLE IF NOT EXISTS dump_disambiguations(title TEXT)")
            if bulk:
                _bulk_write(store, batches)
            else:
                store.put_many(_remember_disambiguations(store, batches))
            with store.transaction():  # joins the one above when extending a snapshot
                _fill_disambiguations(store)
                store.set_meta("snapshot_id", store.content_hash())
                record_source(store, _source_entry(dump, stats))
    except sqlite3.Error as exc:  # e.g. a full disk: what was not committed was rolled back
        raise SnapshotError(f"cannot import {path} into {store.path}: {exc}") from None
    return stats


def usable_cores() -> int:
    """Return how many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def worker_count(requested: int | None, dump: Dump) -> int:
    """Return how many parsing processes can help: `requested`, at most one per usable core.

    A dump whose files all go whole to a worker (`WHOLE_FILE_LIMIT`) needs no more
    processes than it has files (a tar's files are known only as it is read).
    """
    useful = usable_cores()
    if not dump.is_tar and all(f.size <= WHOLE_FILE_LIMIT for f in dump.files):
        useful = min(useful, len(dump.files))
    return max(1, min(requested or useful, useful))


def _source_entry(dump: Dump, stats: DumpStats) -> dict[str, object]:
    return {
        "source": SOURCE_NAME,
        "files": stats.files,
        "pages": stats.pages,
        "file_list_sha256": dump.file_list_sha256(),
        "skipped_lines": stats.bad_lines,
        "damaged_files": stats.damaged_files,
    }


def record_source(store: SnapshotDatabase, entry: dict[str, object]) -> None:
    """Record where the snapshot's pages came from in its `source` metadata (a list if several)."""
    old = store.meta("source")
    if old is None:
        store.set_meta("source", json.dumps(entry))
        return
    try:
        earlier = json.loads(old)
    except ValueError:
        earlier = old  # a free-text source (the embedded corpus)
    entries = earlier if isinstance(earlier, list) else [earlier]
    store.set_meta("source", json.dumps([*entries, entry]))


def _quiet_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is handled once, by the writer


def _work(unit: Unit, skip_bad: bool) -> tuple[Parsed, str | None, int]:
    """Decompress (if needed) and parse one unit; return rows, damage and lines read."""
    data, damage = (unit.data, unit.damage)
    if unit.compressed:
        data, damage = decompress(unit, MAX_UNIT_BYTES)
        if damage:
            data = data[: data.rfind(b"\n") + 1]
    return parse_lines(data, unit.name, unit.first_line, skip_bad), damage, data.count(b"\n")


def _parsed_batches(
    dump: Dump,
    pool: multiprocessing.pool.Pool,
    workers: int,
    stats: DumpStats,
    skip_bad: bool,
    progress: Progress | None,
) -> Iterator[list[Row]]:
    """Yield each unit's rows in dump order, keeping a bounded window of units in flight."""
    units = dump.units()
    window: deque[tuple[Unit, AsyncResult[tuple[Parsed, str | None, int]]]] = deque()

    def submit() -> None:
        unit = next(units, None)
        if unit is not None:
            window.append((unit, pool.apply_async(_work, (unit, skip_bad))))

    for _ in range(workers * WINDOW_PER_WORKER):
        submit()
    while window:
        unit, pending = window.popleft()
        parsed, damage, lines = pending.get()
        submit()
        stats.bad_lines += parsed.bad_lines
        stats.examples.extend(parsed.examples[: max(0, 5 - len(stats.examples))])
        if parsed.bad_lines and not skip_bad:
            raise SnapshotError(f"{parsed.examples[0]} (--skip-bad-lines skips such lines)")
        if damage:
            where = f"{unit.name}: damaged after line {unit.first_line + lines - 1} ({damage})"
            if not skip_bad:
                raise SnapshotError(f"{where} (--skip-bad-lines keeps the lines before)")
            stats.damaged_files += 1
            if len(stats.examples) < 5:
                stats.examples.append(where)
        stats.pages += parsed.pages
        stats.files = max(stats.files, len(dump.files))  # a tar's files are counted as read
        stats.bytes_done += unit.size
        stats.files_done += unit.last or bool(damage)
        yield parsed.rows
        if progress is not None:
            progress(stats)


def _remember_disambiguations(
    store: SnapshotDatabase, batches: Iterator[list[Row]]
) -> Iterator[Row]:
    for rows in batches:
        for row in rows:
            if row[1] == "disambiguation":
                store.conn.execute("INSERT INTO dump_disambiguations VALUES (?)", (row[0],))
            yield row


_UPSERT = (
    "INSERT INTO pages(title, norm_title, kind, body, split) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT(title) DO UPDATE SET kind = excluded.kind, body = excluded.body, "
    "split = excluded.split"
)
_REDIRECT = (
    "INSERT OR IGNORE INTO pages(title, norm_title, kind, body, split) VALUES (?, ?, ?, ?, ?)"
)


def _bulk_write(store: SnapshotDatabase, batches: Iterator[list[Row]]) -> None:
    """Write a new snapshot's rows without a journal, then build its indexes once."""
    conn = store.conn
    with store._lock:
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-65536"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("BEGIN IMMEDIATE")
        for rows in batches:
            pages = [
                (t, normalize_title(t), k, b, int(s)) for t, k, b, s in rows if k != "redirect"
            ]
            conn.executemany(_UPSERT, pages)
            conn.executemany(
                "INSERT INTO dump_disambiguations VALUES (?)",
                [(t,) for t, _, k, _, _ in pages if k == "disambiguation"],
            )
            redirects = [(t, normalize_title(t), k, b, 0) for t, k, b, _ in rows if k == "redirect"]
            conn.executemany(_REDIRECT, redirects)
        conn.execute(
            "INSERT INTO pages_fts(rowid, title, body) "
            "SELECT id, title, body FROM pages WHERE kind = 'page'"
        )
        title_search.index_all_titles(conn)
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("PRAGMA synchronous=FULL")


def _fill_disambiguations(store: SnapshotDatabase) -> None:
    """Give this import's disambiguation pages options: their links, then titles `X (...)`, `X, ...`."""
    conn = store.conn
    for (title,) in conn.execute("SELECT DISTINCT title FROM dump_disambiguations"):
        row = conn.execute(
            "SELECT body FROM pages WHERE title = ? AND kind = 'disambiguation'", (title,)
        ).fetchone()
        if row is None:
            continue
        base = title.removesuffix(DISAMBIGUATION_SUFFIX)
        options: dict[str, None] = dict.fromkeys(json.loads(row[0]))
        if (
            base != title
            and conn.execute(
                "SELECT 1 FROM pages WHERE title = ? AND kind = 'page'", (base,)
            ).fetchone()
        ):
            options = {base: None, **options}
        for prefix in (f"{base} (", f"{base}, "):
            for (option,) in conn.execute(
                "SELECT title FROM pages WHERE title > ? AND title < ? AND kind = 'page' "
                "ORDER BY title LIMIT ?",
                (prefix, prefix + "\U0010ffff", MAX_OPTIONS),
            ):
                options.setdefault(option, None)
        options.pop(title, None)
        body = json.dumps(list(options)[:MAX_OPTIONS], ensure_ascii=False)
        conn.execute(
            "UPDATE pages SET body = ? WHERE title = ? AND kind = 'disambiguation'", (body, title)
        )
    conn.execute("DELETE FROM dump_disambiguations")
