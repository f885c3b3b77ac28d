"""The SQLite snapshot: import (JSONL and HotpotQA JSON), idempotence, lookup, search, errors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from wikireact.errors import SnapshotError
from wikireact.wiki.base import Page
from wikireact.wiki.importing.importer import import_file
from wikireact.wiki.snapshot import SnapshotDatabase, SnapshotSource

HOTPOT = [
    {
        "_id": "1",
        "question": "q",
        "answer": "a",
        "context": [
            [
                "Ed Wood",
                ["Edward Davis Wood Jr. was an American filmmaker.", " He was born in 1924."],
            ],
            [
                "Scott Derrickson",
                ["Scott Derrickson is an American director.", " He was born in Denver."],
            ],
        ],
    },
    {
        "_id": "2",
        "question": "q2",
        "answer": "b",
        "context": [
            [
                "Ed Wood",
                ["Edward Davis Wood Jr. was an American filmmaker.", " He was born in 1924."],
            ],
            ["Tim Burton", ["Tim Burton is an American filmmaker.", " He directed Ed Wood."]],
        ],
    },
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    db = tmp_path / "wiki.db"
    store = SnapshotDatabase.create(db)
    hotpot = tmp_path / "hotpot.json"
    hotpot.write_text(json.dumps(HOTPOT), encoding="utf-8")
    stats = import_file(hotpot, store)
    assert (stats.read, stats.added, stats.unchanged) == (4, 3, 1)
    jsonl = write_jsonl(
        tmp_path / "pages.jsonl",
        [
            {"title": "Poughkeepsie, New York", "text": "Poughkeepsie is a city in New York."},
            {
                "title": "Los Angeles",
                "text": "Los Angeles is a city in California.\n== History ==\nIt grew.",
            },
        ],
    )
    assert import_file(jsonl, store).added == 2
    store.conn.close()
    return db


def test_exact_then_case_and_whitespace_insensitive(snapshot: Path) -> None:
    source = SnapshotSource.open(snapshot)
    page = source.fetch("Ed Wood")
    assert isinstance(page, Page)
    assert page.text == "Edward Davis Wood Jr. was an American filmmaker.\nHe was born in 1924."
    assert source.fetch("ed  wood") == page
    assert source.fetch("Ed_Wood") == page
    assert source.fetch("Edward Wood") is None


def test_similar_uses_full_text_search_title_first(snapshot: Path) -> None:
    source = SnapshotSource.open(snapshot)
    assert source.similar("Wood")[0] == "Ed Wood"
    assert "Tim Burton" in source.similar("American filmmaker")
    assert source.similar("city New York")[0] == "Poughkeepsie, New York"
    assert source.similar("???") == []


def test_import_is_idempotent_and_updates_changed_pages(snapshot: Path, tmp_path: Path) -> None:
    store = SnapshotDatabase.create(snapshot)
    first_id = store.meta("snapshot_id")
    jsonl = write_jsonl(
        tmp_path / "again.jsonl",
        [
            {
                "title": "Los Angeles",
                "text": "Los Angeles is a city in California.\n== History ==\nIt grew.",
            },
            {"title": "Poughkeepsie, New York", "text": "Poughkeepsie is a city on the Hudson."},
        ],
    )
    stats = import_file(jsonl, store)
    assert (stats.added, stats.changed, stats.unchanged) == (0, 1, 1)
    assert store.count() == 5
    assert store.meta("snapshot_id") != first_id
    assert store.full_text_search("Hudson", 5) == ["Poughkeepsie, New York"]
    assert store.full_text_search("Poughkeepsie city New", 5)[0] == "Poughkeepsie, New York"


def test_malformed_input_changes_nothing(snapshot: Path, tmp_path: Path) -> None:
    store = SnapshotDatabase.create(snapshot)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "New page", "text": "fine"}\n{"title": 3}\n', encoding="utf-8")
    with pytest.raises(SnapshotError, match="bad.jsonl:2"):
        import_file(bad, store)
    assert store.count() == 5
    broken = tmp_path / "broken.json"
    broken.write_text('[{"context": [["A", ["x"]]]}, {"context": ', encoding="utf-8")
    with pytest.raises(SnapshotError, match="broken.json: item 2 is not valid JSON"):
        import_file(broken, store)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"title": "Caf\xe9", "text": "x"}\n'.encode("latin-1"))
    with pytest.raises(SnapshotError, match="latin.jsonl:1"):
        import_file(latin, store)
    assert store.count() == 5


def test_missing_corrupt_and_newer_snapshots_are_refused(snapshot: Path, tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="not found"):
        SnapshotSource.open(tmp_path / "nope.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SnapshotError, match="not a readable wikireact snapshot"):
        SnapshotSource.open(junk)
    conn = sqlite3.connect(snapshot)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(SnapshotError, match="newer wikireact"):
        SnapshotSource.open(snapshot)


def test_read_only_snapshot_file_can_be_served(snapshot: Path) -> None:
    snapshot.chmod(0o444)
    try:
        assert SnapshotSource.open(snapshot).fetch("Tim Burton") is not None
    finally:
        snapshot.chmod(0o644)


def test_streaming_import_handles_many_records(tmp_path: Path) -> None:
    rows = [{"title": f"Page {i}", "text": f"Page {i} is page number {i}."} for i in range(5000)]
    store = SnapshotDatabase.create(tmp_path / "big.db")
    assert import_file(write_jsonl(tmp_path / "big.jsonl", rows), store).added == 5000
    assert SnapshotSource(store).fetch("page 4321") == Page(
        "Page 4321", "Page 4321 is page number 4321."
    )
