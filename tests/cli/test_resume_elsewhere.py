"""A thread resumes from any directory on the same files, and never on a changed snapshot.

`ask` stores `scripted:FILE`, `PATH.db` and `record:PATH.db` as absolute paths, and the
id of the snapshot it started on; `resume` refuses (one line, nothing run) if that file
now holds another snapshot.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import GOOD_RUN, PAGES, QUESTION
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.wiki.factory import close_sources

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("wide_terminal")  # one message is one line


def make_snapshot(path: Path, pages: dict[str, str]) -> None:
    source = path.with_suffix(".jsonl")
    source.write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in pages.items()))
    result = runner.invoke(app, ["snapshot", "import", str(source), "--out", str(path)])
    assert result.exit_code == 0, result.output


def start_in(directory: Path, monkeypatch: pytest.MonkeyPatch, db: Path, thread_id: str) -> None:
    """`ask` with relative paths, in `directory`; the two-output script stops it at step 3."""
    directory.mkdir()
    make_snapshot(directory / "snap.db", PAGES)
    (directory / "s.json").write_text(json.dumps(GOOD_RUN[:2]))
    monkeypatch.chdir(directory)
    first = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--model",
            "scripted:s.json",
            "--wiki",
            "snap.db",
            "--db",
            str(db),
            "--thread-id",
            thread_id,
            "--json",
        ],
    )
    assert first.exit_code == 1 and f"wikireact resume {thread_id}" in first.stderr
    (directory / "s.json").write_text(json.dumps(GOOD_RUN))  # the model is back


def test_resume_from_another_directory_uses_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "threads.db"
    start_in(tmp_path / "a", monkeypatch, db, "t1")
    settings = SqliteThreads(db).context_fields("t1")
    assert settings["wiki"] == str(tmp_path / "a" / "snap.db")
    assert settings["model"] == f"scripted:{tmp_path / 'a' / 's.json'}"

    elsewhere = tmp_path / "b"  # holds decoys with the same relative names
    elsewhere.mkdir()
    make_snapshot(elsewhere / "snap.db", {"Ed Wood": "A decoy page."})
    (elsewhere / "s.json").write_text(json.dumps(["Action: Finish[decoy]"] * 4))
    monkeypatch.chdir(elsewhere)
    resumed = runner.invoke(app, ["resume", "t1", "--db", str(db), "--json"])
    assert resumed.exit_code == 0, resumed.output
    out = json.loads(resumed.stdout)
    assert out["answer"] == "yes" and out["steps"] == 4
    assert (
        out["trajectory"][2]["observation"]
        == "(Result 1 / 1) Wood was born in Poughkeepsie, New York."
    )


def test_record_path_is_stored_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps(["Action: Finish[x]"]))
    result = runner.invoke(
        app,
        [
            "ask",
            "q",
            "--model",
            "scripted:s.json",
            "--wiki",
            "record:rec.db",
            "--thread-id",
            "r1",
            "--db",
            "threads.db",
        ],
    )
    assert result.exit_code == 0, result.output
    assert (
        SqliteThreads(tmp_path / "threads.db").context_fields("r1")["wiki"]
        == f"record:{tmp_path / 'rec.db'}"
    )


def test_resume_refuses_a_snapshot_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "threads.db"
    start_in(tmp_path / "a", monkeypatch, db, "t2")
    snapshot = tmp_path / "a" / "snap.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{snapshot}{suffix}").unlink(missing_ok=True)
    make_snapshot(snapshot, {**PAGES, "Ed Wood": "Edward Wood was a Canadian hockey player."})
    close_sources()  # a new process would open the file afresh
    resumed = runner.invoke(app, ["resume", "t2", "--db", str(db), "--json"])
    assert resumed.exit_code == 2
    assert f"the snapshot {snapshot} changed since thread t2 started" in resumed.stderr
    assert len(resumed.stderr.strip().splitlines()) == 1
    history = runner.invoke(app, ["history", "t2", "--db", str(db)])
    assert "Action 3" not in history.stdout  # nothing ran
    on_purpose = runner.invoke(
        app, ["resume", "t2", "--db", str(db), "--json", "--wiki", str(snapshot)]
    )
    assert on_purpose.exit_code == 0, on_purpose.output
    assert json.loads(on_purpose.stdout)["steps"] == 4
