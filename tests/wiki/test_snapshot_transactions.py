"""`snapshot import` keeps all of an import or none of it, and says which (issue 34, items 3, 4, 19).

Two imports to one new `--out`: the second is refused, never silently replaced by the
first. Interrupted or killed at any point (while the content hash runs, during the second
input), an existing snapshot keeps its pages, its id and its `source` together. A full disk
is the same one line for a dump and a JSON-lines file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import PAGES, flat, write_snapshot
from test_dump_import import record, run_import, write_dump

from wikireact.cli import snapshot_command
from wikireact.wiki.importing import dump_import, importer
from wikireact.wiki.snapshot import SnapshotDatabase

HERE = Path(__file__).resolve().parent.parent
WIKIREACT = [sys.executable, "-m", "wikireact", "snapshot", "import"]


def write_jsonl(path: Path, pages: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in pages.items()))
    return path


def contents(path: Path) -> tuple[Any, ...]:
    """Everything an import may change: every row, the snapshot id and the `source` metadata."""
    store = SnapshotDatabase.open_readonly(path)
    try:
        rows = store.conn.execute("SELECT title, kind, body FROM pages ORDER BY title").fetchall()
        return rows, store.meta("snapshot_id"), store.meta("source")
    finally:
        store.close()


def titles(path: Path) -> set[str]:
    return {title for title, _, _ in contents(path)[0]}


def import_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `wikireact snapshot import ARGS` in its own process."""
    return subprocess.run(
        [*WIKIREACT, *map(str, args)], capture_output=True, text=True, timeout=300
    )


def start_paused(
    tmp_path: Path, target: str, *args: str | Path
) -> tuple[subprocess.Popen[str], Path]:
    """Start `snapshot import ARGS` paused at `target`; return it once it is there, and its go file."""
    reached, go = tmp_path / "reached", tmp_path / "go"
    process = subprocess.Popen(
        [sys.executable, str(HERE / "paused_cli.py"), target, str(reached), str(go), "--"]
        + ["snapshot", "import", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300  # a safety net on a loaded machine, not a measurement
    while not reached.exists():
        if process.poll() is not None:
            raise AssertionError(f"the import ended before {target}: {process.communicate()}")
        assert time.monotonic() < deadline, f"the import never reached {target}"
        time.sleep(0.05)
    return process, go


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    """Two JSON-lines inputs with pages no other input holds."""
    return (
        write_jsonl(tmp_path / "a.jsonl", {"Tim Burton": "Tim Burton is an American director."}),
        write_jsonl(tmp_path / "b.jsonl", {"Johnny Depp": "Johnny Depp is an American actor."}),
    )


def test_a_second_import_to_a_new_out_being_built_is_refused(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    first, second = inputs
    out = tmp_path / "s.db"
    process, go = start_paused(
        tmp_path, "wikireact.wiki.importing.importer:iter_pages", first, "--out", out
    )
    try:
        refused = import_cli(second, "--out", out)
    finally:
        go.touch()
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert refused.returncode == 2, refused.stdout
    assert refused.stderr.splitlines() == [
        f"error: another import (process {process.pid}) is building {out}: run this one again "
        "when it has finished, to add to it"
    ]
    assert titles(out) == {"Tim Burton"}
    again = import_cli(second, "--out", out)
    assert again.returncode == 0, again.stderr
    assert titles(out) == {"Tim Burton", "Johnny Depp"}


def test_an_import_that_finds_out_written_when_it_ends_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inputs: tuple[Path, Path]
) -> None:
    out = tmp_path / "s.db"
    other = write_snapshot(tmp_path / "other.db")
    reading = importer.iter_pages

    def another_import_ends_first(path: Path) -> Iterator[tuple[str, str, bool]]:
        shutil.copyfile(other, out)  # as an import started at the same moment would
        return reading(path)

    monkeypatch.setattr(importer, "iter_pages", another_import_ends_first)
    result = run_import(inputs[0], "--out", out)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: another import wrote {out} while this one ran, so this one was not kept: "
        "run it again to add to it\n"
    )
    assert titles(out) == set(PAGES)
    assert not list(tmp_path.glob(".s.db*"))


def _interrupt(*_: object, **__: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("where", ["content hash", "second input", "dump disambiguations"])
def test_an_interrupted_import_leaves_an_existing_snapshot_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inputs: tuple[Path, Path], where: str
) -> None:
    out = write_snapshot(tmp_path / "s.db")
    before = contents(out)
    given: list[Path] = list(inputs)
    if where == "content hash":
        given = [inputs[0]]
        monkeypatch.setattr(SnapshotDatabase, "content_hash", _interrupt)
    elif where == "second input":
        reading = importer.iter_pages

        def interrupted_at_b(path: Path) -> Iterator[tuple[str, str, bool]]:
            if path == inputs[1]:
                raise KeyboardInterrupt
            return reading(path)

        monkeypatch.setattr(importer, "iter_pages", interrupted_at_b)
    else:
        given = [inputs[0], write_dump(tmp_path / "dump")]
        monkeypatch.setattr(dump_import, "_fill_disambiguations", _interrupt)
    result = run_import(*given, "--out", out)
    assert result.exit_code == 130, result.output
    assert flat(result.output).endswith(
        f"error: interrupted; {out} is unchanged (an import starts over when run again)"
    )
    assert contents(out) == before


def test_a_kill_while_the_content_hash_runs_leaves_the_snapshot_as_it_was(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    out = write_snapshot(tmp_path / "s.db")
    before = contents(out)
    target = "wikireact.wiki.snapshot:SnapshotDatabase.content_hash"
    process, _ = start_paused(tmp_path, target, inputs[0], "--out", out)
    process.kill()
    process.communicate(timeout=300)
    assert contents(out) == before


@pytest.mark.parametrize("existing", [False, True], ids=["new", "existing"])
def test_a_ctrl_c_after_the_import_was_kept_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inputs: tuple[Path, Path], existing: bool
) -> None:
    out = write_snapshot(tmp_path / "s.db") if existing else tmp_path / "s.db"
    shown = snapshot_command.console.print

    def interrupted_at_the_summary(text: object, *args: Any, **kwargs: Any) -> None:
        if "snapshot id" in str(text):
            raise KeyboardInterrupt
        shown(text, *args, **kwargs)

    monkeypatch.setattr(snapshot_command.console, "print", interrupted_at_the_summary)
    result = run_import(inputs[0], "--out", out)
    assert result.exit_code == 130
    assert flat(result.output).endswith(
        f"error: interrupted after the import completed: {out} holds it"
    )
    assert "Tim Burton" in titles(out)


def _small_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every snapshot opened for writing from now on can grow by only a few pages."""
    create: Callable[[Path], SnapshotDatabase] = SnapshotDatabase.create

    def created(cls: type[SnapshotDatabase], path: Path) -> SnapshotDatabase:
        store = create(path)
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages + 4}")
        return store

    monkeypatch.setattr(SnapshotDatabase, "create", classmethod(created))


@pytest.mark.parametrize("existing", [False, True], ids=["new", "existing"])
@pytest.mark.parametrize("kind", ["dump", "jsonl"])
def test_a_full_disk_is_the_same_one_line_for_a_dump_and_jsonl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, existing: bool
) -> None:
    out = tmp_path / "s.db"
    before = contents(write_snapshot(out)) if existing else None
    texts = {f"Page {i}": f"Page {i} is a page about the number {i}. " * 5 for i in range(400)}
    given = (
        write_dump(
            tmp_path / "dump",
            {"AA/wiki_00.bz2": [record(i, t, [x]) for i, (t, x) in enumerate(texts.items())]},
        )
        if kind == "dump"
        else write_jsonl(tmp_path / "pages.jsonl", texts)
    )
    _small_disk(monkeypatch)
    result = run_import(given, "--out", out)
    assert result.exit_code == 2, result.output
    assert (
        flat(result.output) == f"error: cannot import {given} into {out}: database or disk is full"
    )
    if existing:
        assert contents(out) == before
    else:
        assert not out.exists() and not list(tmp_path.glob(".s.db*"))
