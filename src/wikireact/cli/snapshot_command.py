"""`wikireact snapshot import`: dumps, HotpotQA JSON and JSONL files into one snapshot file.

A new `--out` appears only when every input was imported, and never over another
import's file; an existing one is extended in one transaction for all the inputs
(`wikireact.wiki.importing.snapshot_files`). Ctrl-C ends in one line saying what was
kept. A URL given as a file is refused without showing its password.
"""

from __future__ import annotations

from pathlib import Path

from wikireact.cli.common import console, errors, fail
from wikireact.cli.display import clean
from wikireact.cli.import_progress import ImportProgress
from wikireact.errors import SnapshotError
from wikireact.wiki.factory import shown_if_url
from wikireact.wiki.importing.dump_files import is_dump
from wikireact.wiki.importing.dump_import import import_dump, record_source
from wikireact.wiki.importing.importer import import_file, source_entry
from wikireact.wiki.importing.snapshot_files import ImportTarget
from wikireact.wiki.snapshot import SnapshotDatabase


def import_snapshot(
    paths: list[Path], out: Path, *, skip_bad_lines: bool, workers: int | None
) -> None:
    """Import `paths` into the snapshot `out`, printing what each input gave."""
    _refuse_urls(paths, out)
    target = ImportTarget(out)
    existed = out.exists()
    try:
        with target.open() as (store, new):
            for path in paths:
                if is_dump(path):
                    empty = (
                        new and store.conn.execute("SELECT 1 FROM pages LIMIT 1").fetchone() is None
                    )
                    _import_dump(path, store, empty, skip_bad_lines, workers)
                else:
                    stats = import_file(path, store)
                    record_source(store, source_entry(path, stats))
                    console.print(
                        f"{clean(path)}: {stats.read} pages read, {stats.added} added, "
                        f"{stats.changed} updated, {stats.unchanged} unchanged"
                    )
            summary = f"{store.count()} pages, snapshot id {store.meta('snapshot_id')}"
        console.print(f"{clean(out)}: {summary}")
    except KeyboardInterrupt:
        if target.written():
            fail(f"interrupted after the import completed: {clean(out)} holds it", 130)
        kept = f"{clean(out)} is unchanged" if existed else "no snapshot was written"
        fail(f"interrupted; {kept} (an import starts over when run again)", 130)


def _refuse_urls(paths: list[Path], out: Path) -> None:
    """Refuse a URL given as the snapshot or an input (a snapshot is a file)."""
    shown = shown_if_url(str(out))
    if shown is not None:
        raise SnapshotError(f"--out takes a snapshot file, not a URL ({shown})")
    for path in paths:
        shown = shown_if_url(str(path))
        if shown is not None:
            raise SnapshotError(f"snapshot import reads files, not a URL ({shown})")


def _import_dump(
    path: Path, store: SnapshotDatabase, bulk: bool, skip_bad_lines: bool, workers: int | None
) -> None:
    with ImportProgress(clean(path), errors) as shown:
        dump = import_dump(
            path,
            store,
            bulk=bulk,
            skip_bad_lines=skip_bad_lines,
            workers=workers,
            progress=shown.update,
        )
    if workers is not None and dump.workers < workers:
        errors.print(
            f"note: --workers {workers} is more than can help; {dump.workers} were used "
            "(one per core, and per file when each file is parsed whole)"
        )
    console.print(
        f"{clean(path)}: {dump.files} files, {dump.pages} pages in {dump.elapsed:.0f} s "
        f"by {dump.workers} workers, {dump.bad_lines} bad lines skipped, "
        f"{dump.damaged_files} damaged files"
    )
    for example in dump.examples:
        console.print(f"  skipped: {clean(example)}")
