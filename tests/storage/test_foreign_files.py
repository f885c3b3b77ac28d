"""Other programs' SQLite files are never modified: `--db`, `--out` and `record:` refuse them.

Each refusal is one line, and the file (and its directory: no `-wal`, `-shm` or
`-journal` left behind) is byte-identical afterwards.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from support import GOOD_RUN, PAGES, QUESTION, flat
from typer.testing import CliRunner, Result

from wikireact.cli.app import app
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.wiki.snapshot import SnapshotDatabase

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("wide_terminal")  # one message is one line


def other_programs_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes(body) VALUES ('keep me')")
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()


def other_programs_empty_db(path: Path) -> None:
    """No tables yet, but marked as another program's by its user_version."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 3")
    conn.close()


def other_programs_wal_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE settings(key TEXT, value TEXT)")
    conn.commit()
    conn.close()


def conflicting_checkpoints_table(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE checkpoints(day TEXT, distance_km REAL)")
    conn.commit()
    conn.close()


def stock_langgraph_checkpoints(path: Path) -> None:
    conn = sqlite3.connect(path, check_same_thread=False)
    SqliteSaver(conn).setup()
    conn.close()


def snapshot_file(path: Path) -> None:
    store = SnapshotDatabase.create(path)
    store.put_many((title, "page", text) for title, text in PAGES.items())
    store.conn.close()


def checkpoint_file(path: Path) -> None:
    SqliteThreads(path).close()


def garbage(path: Path) -> None:
    path.write_bytes(os.urandom(4096))


def sqlite_header_then_garbage(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))


def first_page_then_garbage(path: Path) -> None:
    """A corrupt database whose first page (the schema) still reads: once written to."""
    other_programs_db(path)
    conn = sqlite3.connect(path)
    conn.executemany("INSERT INTO notes(body) VALUES (?)", [("x" * 500,)] * 50)
    conn.commit()
    conn.close()
    data = path.read_bytes()
    path.write_bytes(data[:4096] + os.urandom(len(data) - 4096))


def corrupt_wal_db(path: Path) -> None:
    """A WAL-mode database cut after its 100-byte header: reading it in WAL mode makes -wal/-shm."""
    other_programs_wal_db(path)
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\xff" * (len(data) - 100))


def truncated_wal_db(path: Path) -> None:
    other_programs_wal_db(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


MAKERS: dict[str, Callable[[Path], None]] = {
    "another program's db": other_programs_db,
    "another program's WAL db": other_programs_wal_db,
    "another program's empty db": other_programs_empty_db,
    "a conflicting checkpoints table": conflicting_checkpoints_table,
    "LangGraph's own checkpoint db": stock_langgraph_checkpoints,
    "a snapshot": snapshot_file,
    "a checkpoint file": checkpoint_file,
    "garbage": garbage,
    "a SQLite header then garbage": sqlite_header_then_garbage,
    "a corrupt SQLite file": first_page_then_garbage,
    "a corrupt WAL-mode file": corrupt_wal_db,
    "a truncated WAL-mode file": truncated_wal_db,
}
CORRUPT = ["a SQLite header then garbage", "a corrupt WAL-mode file", "a truncated WAL-mode file"]
NOT_CHECKPOINTS = [name for name in MAKERS if name != "a checkpoint file"]
NOT_SNAPSHOTS = [name for name in MAKERS if name != "a snapshot"]


def directory_state(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.fixture
def pages(tmp_path: Path) -> Path:
    path = tmp_path / "pages.jsonl"
    path.write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in PAGES.items()))
    return path


@pytest.fixture
def script(tmp_path: Path) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(GOOD_RUN))
    return f"scripted:{path}"


def refused_untouched(
    tmp_path: Path, kind: str, run: Callable[[Path], Result], message: str
) -> None:
    target_dir = tmp_path / "target"
    target_dir.mkdir(parents=True)
    target = target_dir / "file.db"
    MAKERS[kind](target)
    before = directory_state(target_dir)
    result = run(target)
    assert result.exit_code == 2, result.output
    stderr = flat(result.stderr)
    assert message in stderr and str(target) in stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert directory_state(target_dir) == before


@pytest.mark.parametrize("kind", NOT_CHECKPOINTS)
def test_db_refuses_files_that_are_not_checkpoint_files(
    tmp_path: Path, kind: str, script: str
) -> None:
    snapshot = tmp_path / "wiki.db"
    snapshot_file(snapshot)
    refused_untouched(
        tmp_path,
        kind,
        lambda db: runner.invoke(
            app, ["ask", QUESTION, "--model", script, "--wiki", str(snapshot), "--db", str(db)]
        ),
        "cannot use checkpoint file",
    )


@pytest.mark.parametrize("kind", NOT_CHECKPOINTS)
def test_history_and_resume_refuse_them_too(tmp_path: Path, kind: str) -> None:
    for command in ("history", "resume"):

        def run(db: Path, command: str = command) -> Result:
            return runner.invoke(app, [command, "t1", "--db", str(db)])

        refused_untouched(
            tmp_path / command,
            kind,
            run,
            "cannot use checkpoint file",
        )


@pytest.mark.parametrize("kind", NOT_SNAPSHOTS)
def test_snapshot_import_refuses_files_that_are_not_snapshots(
    tmp_path: Path, kind: str, pages: Path
) -> None:
    refused_untouched(
        tmp_path,
        kind,
        lambda out: runner.invoke(app, ["snapshot", "import", str(pages), "--out", str(out)]),
        "cannot write snapshot",
    )


@pytest.mark.parametrize("kind", list(MAKERS))
def test_model_cache_refuses_files_that_are_not_model_caches(
    tmp_path: Path, kind: str, script: str
) -> None:
    snapshot = tmp_path / "wiki.db"
    snapshot_file(snapshot)
    refused_untouched(
        tmp_path,
        kind,
        lambda cache: runner.invoke(
            app,
            [
                "ask",
                QUESTION,
                "--model",
                script,
                "--wiki",
                str(snapshot),
                "--model-cache",
                str(cache),
            ],
        ),
        "cannot use model cache",
    )


@pytest.mark.parametrize("kind", CORRUPT)
def test_wiki_refuses_a_corrupt_snapshot_and_leaves_it_alone(
    tmp_path: Path, kind: str, script: str
) -> None:
    refused_untouched(
        tmp_path,
        kind,
        lambda wiki: runner.invoke(app, ["ask", QUESTION, "--model", script, "--wiki", str(wiki)]),
        "is not a readable wikireact snapshot",
    )


def test_record_refuses_another_programs_db(tmp_path: Path, script: str) -> None:
    refused_untouched(
        tmp_path,
        "another program's db",
        lambda db: runner.invoke(
            app, ["ask", QUESTION, "--model", script, "--wiki", f"record:{db}"]
        ),
        "cannot write snapshot",
    )


def test_new_empty_and_own_files_are_used(tmp_path: Path, pages: Path, script: str) -> None:
    empty_db, empty_out = tmp_path / "empty-threads.db", tmp_path / "empty-snapshot.db"
    empty_db.touch()
    empty_out.touch()
    for out in (empty_out, tmp_path / "new" / "snapshot.db", empty_out):  # the last: already ours
        result = runner.invoke(app, ["snapshot", "import", str(pages), "--out", str(out)])
        assert result.exit_code == 0, result.output
    for db in (empty_db, tmp_path / "new" / "threads.db", empty_db):
        result = runner.invoke(
            app, ["ask", QUESTION, "--model", script, "--wiki", str(empty_out), "--db", str(db)]
        )
        assert result.exit_code == 0, result.output
    blank = tmp_path / "blank.db"  # a SQLite database with nothing in it
    conn = sqlite3.connect(blank)
    conn.execute("CREATE TABLE t(x)")
    conn.execute("DROP TABLE t")
    conn.commit()
    conn.close()
    assert blank.stat().st_size > 0
    SqliteThreads(blank).close()
