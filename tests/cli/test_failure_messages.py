"""Failures of the outside world and bad input end in one clear line, never a traceback.

A full disk is real SQLite `SQLITE_FULL`: `PRAGMA max_page_count` on every connection caps
the database size, as a small disk would (a tmpfs gives the same messages).
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from support import GOOD_RUN, PAGES, QUESTION, untimed_result
from typer.testing import CliRunner

from wikireact import MemorySource
from wikireact.cli.app import app
from wikireact.wiki.factory import close_sources
from wikireact.wiki.snapshot import SnapshotDatabase

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("wide_terminal")  # one message is one line


def one_line(result: Any, *fragments: str) -> None:
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def make_snapshot(path: Path, pages: dict[str, str]) -> None:
    store = SnapshotDatabase.create(path)
    store.put_many((title, "page", text) for title, text in pages.items())
    store.set_meta("snapshot_id", store.content_hash())
    store.conn.close()


def write_script(tmp_path: Path, outputs: Any, name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(outputs if isinstance(outputs, str) else json.dumps(outputs))
    return f"scripted:{path}"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "wiki.db"
    make_snapshot(path, PAGES)
    return path


# WIKIREACT_DEBUG and other yes/no variables


@pytest.mark.parametrize(
    ("value", "traceback"),
    [
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
        ("", False),
        ("banana", False),
        ("1", True),
        ("true", True),
        ("YES", True),
        ("on", True),
    ],
)
def test_debug_flag_is_parsed(
    value: str, traceback: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(
        "wikireact.storage.threads.open_threads", broken
    )  # how the CLI opens every --db
    monkeypatch.setenv("WIKIREACT_DEBUG", value)
    db = tmp_path / "threads.db"
    db.touch()
    result = runner.invoke(app, ["history", "t1", "--db", str(db)])
    assert result.exit_code == 1
    if traceback:
        assert isinstance(result.exception, RuntimeError)
    else:
        assert isinstance(result.exception, SystemExit)
        one_line(result, "unexpected RuntimeError: boom")


def test_a_yes_no_variable_with_another_value_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, snapshot: Path
) -> None:
    monkeypatch.setenv("WIKIREACT_APPROVE", "maybe")
    result = runner.invoke(
        app, ["ask", QUESTION, "--model", write_script(tmp_path, GOOD_RUN), "--wiki", str(snapshot)]
    )
    assert result.exit_code == 2
    one_line(result, "WIKIREACT_APPROVE must be 1/true/yes/on or 0/false/no/off, got 'maybe'")


# A full disk


PAGES_CAP = 8
"""Pages of a 4 KiB-page file: the schema (7) and the first checkpoints fit, GOOD_RUN (~10) does not."""


@pytest.fixture
def disk_pages(monkeypatch: pytest.MonkeyPatch) -> Callable[[int | None], None]:
    """Return a switch: cap every new SQLite connection at that many pages (None: no cap)."""
    limit: dict[str, int | None] = {"pages": None}
    connect = sqlite3.connect

    def capped(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        if limit["pages"] is not None:
            conn.execute(f"PRAGMA max_page_count = {limit['pages']}")
        return conn

    monkeypatch.setattr(sqlite3, "connect", capped)
    return lambda pages: limit.update(pages=pages)


def test_disk_full_in_ask_is_one_line_and_resumable(
    tmp_path: Path, snapshot: Path, disk_pages: Callable[[int | None], None]
) -> None:
    db = tmp_path / "threads.db"
    model = write_script(tmp_path, GOOD_RUN)
    straight = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--model",
            model,
            "--wiki",
            str(snapshot),
            "--json",
            "--db",
            str(tmp_path / "other.db"),
        ],
    )
    # 4 KiB pages (a file made before 8 KiB pages; it keeps them): the episode is about a
    # dozen pages, the schema seven, so the cap lands between them (with 8 KiB pages it cannot).
    sqlite3.connect(db).execute("PRAGMA page_size = 4096").execute("VACUUM").connection.close()
    disk_pages(PAGES_CAP)  # room for the schema and the first checkpoints, not the episode
    full = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--model",
            model,
            "--wiki",
            str(snapshot),
            "--json",
            "--db",
            str(db),
            "--thread-id",
            "t1",
        ],
    )
    assert full.exit_code == 1
    one_line(
        full,
        f"cannot save the episode in {db}: database or disk is full",
        f"continue with `wikireact resume t1 --db {db}`",
    )
    disk_pages(None)  # space was freed
    resumed = runner.invoke(app, ["resume", "t1", "--db", str(db), "--json"])
    assert resumed.exit_code == 0, resumed.output
    assert untimed_result(resumed.stdout, thread_id="") == untimed_result(
        straight.stdout, thread_id=""
    )


def test_disk_full_before_the_thread_is_recorded(
    tmp_path: Path, snapshot: Path, disk_pages: Callable[[int | None], None]
) -> None:
    disk_pages(5)  # room for the empty file, not for the thread registry row
    result = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--model",
            write_script(tmp_path, GOOD_RUN),
            "--wiki",
            str(snapshot),
            "--db",
            str(tmp_path / "threads.db"),
        ],
    )
    assert result.exit_code == 2, result.stderr
    one_line(result, "database or disk is full")
    assert "resume" not in result.stderr  # there is nothing to resume


@pytest.fixture
def big_pages(tmp_path: Path) -> Path:
    rng = random.Random(1)
    path = tmp_path / "big.jsonl"
    with path.open("w") as handle:
        for i in range(300):
            text = " ".join(f"w{rng.randint(0, 99_999)}" for _ in range(300))
            handle.write(json.dumps({"title": f"Page {i}", "text": text}) + "\n")
    return path


def test_snapshot_import_on_a_full_disk_leaves_no_file(
    tmp_path: Path, big_pages: Path, disk_pages: Callable[[int | None], None]
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    disk_pages(40)
    result = runner.invoke(
        app, ["snapshot", "import", str(big_pages), "--out", str(out_dir / "new.db")]
    )
    assert result.exit_code == 2
    one_line(
        result, f"cannot import {big_pages} into {out_dir / 'new.db'}: database or disk is full"
    )
    assert list(out_dir.iterdir()) == []


def test_snapshot_import_on_a_full_disk_keeps_an_existing_snapshot(
    tmp_path: Path, snapshot: Path, big_pages: Path, disk_pages: Callable[[int | None], None]
) -> None:
    before = SnapshotDatabase.open_readonly(snapshot)
    pages, snapshot_id = before.count(), before.meta("snapshot_id")
    before.conn.close()
    disk_pages(40)
    result = runner.invoke(app, ["snapshot", "import", str(big_pages), "--out", str(snapshot)])
    assert result.exit_code == 2
    one_line(result, "database or disk is full")
    disk_pages(None)
    after = SnapshotDatabase.open_readonly(snapshot)
    assert (after.count(), after.meta("snapshot_id")) == (pages, snapshot_id)


def test_a_full_disk_under_the_page_file_stops_the_episode_resumably(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import wikireact.wiki.live

    recording = tmp_path / "record.db"
    connect = sqlite3.connect
    full = {"yes": True}

    def capped(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        if full["yes"] and str(args[0]) == str(recording):
            conn.execute("PRAGMA max_page_count = 20")  # the schema (18) fits, a long page does not
        return conn

    monkeypatch.setattr(sqlite3, "connect", capped)
    pages = {**PAGES, "Scott Derrickson": PAGES["Scott Derrickson"] + " He makes films." * 1000}
    monkeypatch.setattr(
        wikireact.wiki.live, "LiveSource", lambda: MemorySource(pages)
    )  # no network
    db = tmp_path / "threads.db"
    args = [
        "--model",
        write_script(tmp_path, GOOD_RUN),
        "--wiki",
        f"record:{recording}",
        "--db",
        str(db),
    ]
    stopped = runner.invoke(app, ["ask", QUESTION, *args, "--thread-id", "t1", "--json"])
    assert stopped.exit_code == 1
    one_line(
        stopped,
        f"the page file {recording} cannot be used (database or disk is full)",
        f"wikireact resume t1 --db {db}",
    )
    full["yes"] = False
    close_sources()
    resumed = runner.invoke(app, ["resume", "t1", "--db", str(db), "--json"])
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["answer"] == "yes"


# A corrupt page in a snapshot


def corrupt_snapshot(path: Path) -> None:
    """A snapshot whose page holding `Target` is damaged (the file still opens)."""
    pages = {f"Filler {i}": f"Filler page {i}. " + "lorem ipsum " * 300 for i in range(20)}
    make_snapshot(path, {**pages, "Target": "TARGETMARKER " + "target text " * 300})
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    start = data.find(b"TARGETMARKER") // page_size * page_size
    data[start : start + 12] = b"\xff" * 12
    path.write_bytes(bytes(data))


def test_corrupt_snapshot_page_mid_episode_is_an_observation(tmp_path: Path) -> None:
    wiki = tmp_path / "damaged.db"
    corrupt_snapshot(wiki)
    model = write_script(
        tmp_path, ["Action: Search[Target]", "Action: Search[Filler 3]", "Action: Finish[done]"]
    )
    result = runner.invoke(app, ["ask", QUESTION, "--model", model, "--wiki", str(wiki), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    observations = [step["observation"] for step in out["trajectory"]]
    assert (
        observations[0] == "The snapshot could not be read here (database disk image is malformed)."
    )
    assert observations[1].startswith("Filler page 3.")
    assert out["answer"] == "done"


@pytest.mark.parametrize(
    ("title", "update"),
    [
        ("Target", "UPDATE pages SET body = CAST(body AS BLOB) WHERE title = 'Target'"),
        ("Choice", "UPDATE pages SET body = CAST('[\"Filler 1\"]' AS BLOB) WHERE title = 'Choice'"),
        ("Choice", "UPDATE pages SET body = '{\"not\": \"a list\"}' WHERE title = 'Choice'"),
        ("Target", "UPDATE pages SET title = CAST(title AS BLOB) WHERE title = 'Target'"),
        ("Jump", "UPDATE pages SET body = CAST('Target' AS BLOB) WHERE title = 'Jump'"),
    ],
)
def test_a_snapshot_row_of_the_wrong_type_is_an_observation(
    tmp_path: Path, title: str, update: str
) -> None:
    """A row whose text is stored as a BLOB or a number (another tool wrote it) is unreadable."""
    wiki = tmp_path / "odd.db"
    make_snapshot(wiki, {"Target": "Target text.", "Filler 1": "Filler page 1."})
    with sqlite3.connect(wiki) as conn:
        conn.execute(
            "INSERT INTO pages(title, norm_title, kind, body) VALUES "
            "('Choice', 'choice', 'disambiguation', '[\"Filler 1\"]'), "
            "('Jump', 'jump', 'redirect', 'Target')"
        )
        conn.execute(update)
    model = write_script(
        tmp_path, [f"Action: Search[{title}]", "Action: Search[Filler 1]", "Action: Finish[done]"]
    )
    result = runner.invoke(app, ["ask", QUESTION, "--model", model, "--wiki", str(wiki), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    observations = [step["observation"] for step in out["trajectory"]]
    assert observations[0].startswith("The snapshot could not be read here (")
    assert observations[1].startswith("Filler page 1.") and out["answer"] == "done"


@pytest.mark.parametrize("version", ["abc", "", "1.5", b"1"])
def test_a_snapshot_with_an_unreadable_schema_version_is_refused(
    tmp_path: Path, version: str | bytes
) -> None:
    (tmp_path / "snap").mkdir()
    wiki = tmp_path / "snap" / "odd.db"
    make_snapshot(wiki, PAGES)
    with closing(sqlite3.connect(wiki)) as conn, conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    before = {p.name: p.read_bytes() for p in wiki.parent.iterdir()}
    model = write_script(tmp_path, GOOD_RUN)
    used = runner.invoke(app, ["ask", QUESTION, "--model", model, "--wiki", str(wiki)])
    assert used.exit_code == 2
    one_line(used, str(wiki), "schema_version")
    pages = tmp_path / "pages.jsonl"
    pages.write_text(json.dumps({"title": "A", "text": "B."}) + "\n")
    written = runner.invoke(app, ["snapshot", "import", str(pages), "--out", str(wiki)])
    assert written.exit_code == 2
    one_line(written, str(wiki), "schema_version")
    assert {p.name: p.read_bytes() for p in wiki.parent.iterdir()} == before


# Bad scripts, bad import files


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[]", "holds no outputs"),
        ('{"outputs": []}', "holds no outputs"),
        (
            '{"outputs": ["Action: Finish[x]"], "delay_s": -1}',
            "delay_s must be a number of seconds from 0 to 3600, got -1",
        ),
        ('{"outputs": ["Action: Finish[x]"], "delay_s": NaN}', "got nan"),
        ('{"outputs": ["Action: Finish[x]"], "delay_s": Infinity}', "got inf"),
        ('{"outputs": ["Action: Finish[x]"], "delay_s": "1"}', "got '1'"),
        ('{"outputs": ["Action: Finish[x]"], "delay_s": true}', "got True"),
        ('{"outputs": ["Action: Finish[x]"], "delay_s": 1e308}', "from 0 to 3600, got 1e+308"),
    ],
)
def test_bad_scripts_are_refused_at_load(
    tmp_path: Path, snapshot: Path, content: str, message: str
) -> None:
    db = tmp_path / "threads.db"
    result = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--model",
            write_script(tmp_path, content),
            "--wiki",
            str(snapshot),
            "--db",
            str(db),
            "--thread-id",
            "t1",
        ],
    )
    assert result.exit_code == 2
    one_line(result, "cannot use script", message)
    assert (
        "unknown thread id" in runner.invoke(app, ["history", "t1", "--db", str(db)]).stderr
    )  # nothing started


HOSTILE_JSON = [
    ("[" * 100_000, "nested too deeply"),
    ('["Action: Finish[x]", ' + "9" * 5000 + "]", "a number too long to read"),
]


@pytest.mark.parametrize(("content", "message"), HOSTILE_JSON)
@pytest.mark.parametrize("hostile", ["dev.json", "dev.jsonl", "prompts.json", "script.json"])
def test_hostile_json_files_are_refused_naming_the_file(
    tmp_path: Path, snapshot: Path, hostile: str, content: str, message: str
) -> None:
    files = {
        "dev.json": json.dumps([{"_id": "q1", "question": QUESTION, "answer": "yes"}]),
        "dev.jsonl": json.dumps({"_id": "q1", "question": QUESTION, "answer": "yes"}) + "\n",
        "prompts.json": json.dumps({"webthink_simple6": "Question: q\nAction 1: Finish[a]\n"}),
        "script.json": json.dumps(GOOD_RUN),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(content if name == hostile else text)
    dataset = tmp_path / ("dev.jsonl" if hostile == "dev.jsonl" else "dev.json")
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "eval",
            str(dataset),
            *("--prompts", str(tmp_path / "prompts.json")),
            *("--model", f"scripted:{tmp_path / 'script.json'}"),
            *("--wiki", str(snapshot), "--out", str(out)),
        ],
    )
    assert result.exit_code == 2, result.output
    one_line(result, str(tmp_path / hostile), message)
    assert not (out / "trajectories.jsonl").exists()


@pytest.mark.parametrize("named", [[], ["--prompts-key", "missing"]])
def test_a_prompt_file_with_many_keys_is_refused_in_a_short_line(
    tmp_path: Path, snapshot: Path, named: list[str]
) -> None:
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({f"key{i:06d}": "no exemplar" for i in range(200_000)}))
    dataset = tmp_path / "dev.json"
    dataset.write_text(json.dumps([{"_id": "q1", "question": QUESTION, "answer": "yes"}]))
    result = runner.invoke(
        app,
        [
            *("eval", str(dataset), "--prompts", str(prompts), *named),
            *("--model", write_script(tmp_path, GOOD_RUN), "--wiki", str(snapshot)),
            *("--out", str(tmp_path / "out")),
        ],
    )
    assert result.exit_code == 2, result.output
    one_line(result, str(prompts), "it has: key000000, key000001", "and 199990 more")
    assert len(result.stderr) < 1000


def hotpot(*titles: str) -> list[dict[str, Any]]:
    return [
        {
            "_id": "a",
            "question": "q",
            "answer": "a",
            "context": [[title, ["One sentence.", "Two."]] for title in titles],
        }
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (hotpot("Good", ""), "item 1: a context entry has an empty title"),
        (hotpot("Good", "   "), "item 1: a context entry has an empty title"),
        ({"data": hotpot("Good")}, "its JSON is not a list of items"),
        ({}, "its JSON is not a list of items"),
        ("just text", "its JSON is not a list of items"),
        (42, "its JSON is not a list of items"),
        ([1, 2], 'item 1 is not an object with a "context" list'),
        ([{"title": "Good", "text": "One."}], 'item 1 is not an object with a "context" list'),
    ],
)
def test_bad_hotpot_files_are_refused(tmp_path: Path, content: object, message: str) -> None:
    source = tmp_path / "input.json"
    source.write_text(json.dumps(content))
    out = tmp_path / "out.db"
    result = runner.invoke(app, ["snapshot", "import", str(source), "--out", str(out)])
    assert result.exit_code == 2
    one_line(result, message)
    assert not out.exists()


def test_an_empty_list_is_zero_pages(tmp_path: Path) -> None:
    source = tmp_path / "empty.json"
    source.write_text("  []")
    result = runner.invoke(
        app, ["snapshot", "import", str(source), "--out", str(tmp_path / "out.db")]
    )
    assert result.exit_code == 0 and "0 pages read" in result.stdout
