"""`snapshot import` of the HotpotQA 2017 abstracts dump: layouts, text, bad input, metadata.

Dumps are generated in the distributed layout (`AA/wiki_00.bz2`, one JSON object a
line with `text` as a list of sentences and `text_with_links` with `<a href>` markup).
"""

from __future__ import annotations

import bz2
import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest
from support import flat, write_script
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.wiki.base import Disambiguation, Page
from wikireact.wiki.environment import lookup, search
from wikireact.wiki.importing import dump_files, dump_import
from wikireact.wiki.importing.snapshot_files import temporary_name
from wikireact.wiki.snapshot import SnapshotSource

runner = CliRunner()


def record(page_id: int, title: str, sentences: list[str], links: list[str] | None = None) -> dict:
    """One dump line: `text` as the dump has it, `text_with_links` with markup."""
    linked = links or sentences
    return {
        "id": str(page_id),
        "url": f"https://en.wikipedia.org/wiki?curid={page_id}",
        "title": title,
        "text": sentences,
        "charoffset": [[[0, len(s)]] for s in sentences],
        "text_with_links": linked,
        "charoffset_with_links": [[[0, len(s)]] for s in linked],
    }


ED_WOOD = record(
    12,
    "Ed Wood",
    [
        "Edward Davis Wood Jr. was an American filmmaker.",
        " He was born in 1924 in the U.S. He died.",
    ],
    [
        'Edward Davis Wood Jr. was an American <a href="filmmaker">filmmaker</a>.',
        " He was born in 1924 in the U.S. He died.",
    ],
)
FILES: dict[str, list[dict[str, Any]]] = {
    "AA/wiki_00.bz2": [
        ED_WOOD,
        record(15, "Scott Derrickson", ["Scott Derrickson is an American director."]),
    ],
    "AA/wiki_01.bz2": [
        record(20, "Kiss &amp; Tell (1945 film)", ["Kiss &amp; Tell is a 1945 comedy."]),
        record(21, "Mercury (planet)", ["Mercury is the smallest planet."]),
        record(22, "Mercury (element)", ["Mercury is a chemical element."]),
    ],
    "AB/wiki_00.bz2": [
        record(
            30,
            "Mercury (disambiguation)",
            ["Mercury may refer to:"],
            ['<a href="Mercury%20%28mythology%29">Mercury</a> may refer to:'],
        ),
        record(31, "Warner Bros.", ["Warner Bros.", " Pictures is a studio."]),
    ],
}


def write_dump(root: Path, files: dict[str, list[dict[str, Any]]] = FILES) -> Path:
    """Write `files` (relative path -> records) as a dump tree under `root`."""
    for name, records in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(r) + "\n" for r in records).encode()
        path.write_bytes(bz2.compress(lines) if name.endswith(".bz2") else lines)
    return root


def run_import(*args: str | Path) -> Any:
    return runner.invoke(app, ["snapshot", "import", *map(str, args)])


def test_the_three_layouts_give_the_same_snapshot_and_source(tmp_path: Path) -> None:
    tree = write_dump(tmp_path / "enwiki-abstracts")
    tar = tmp_path / "enwiki-abstracts.tar.bz2"
    with tarfile.open(tar, "w:bz2") as archive:
        archive.add(tree, arcname="enwiki-abstracts")
    single = tmp_path / "wiki_00.bz2"
    single.write_bytes((tree / "AA/wiki_00.bz2").read_bytes())
    ids, sources = [], []
    for name, given in (("tree", tree), ("tar", tar), ("single", single)):
        out = tmp_path / f"{name}.db"
        result = run_import(given, "--out", out, "--workers", "2")
        assert result.exit_code == 0, result.output
        source = SnapshotSource.open(out)
        ids.append(source.snapshot_id)
        sources.append(source.snapshot_source)
    assert ids[0] == ids[1] != ids[2]
    assert sources[0] == sources[1]
    assert sources[0]["source"] == "hotpotqa-abstracts-2017"
    assert (sources[0]["files"], sources[0]["pages"], sources[2]["pages"]) == (3, 7, 2)
    assert len(sources[0]["file_list_sha256"]) == 64 and sources[0]["skipped_lines"] == 0
    assert "tree.db: 10 pages" not in result.output  # the single file holds 2 pages
    assert "single.db: 2 pages" in flat(result.output)


def test_text_keeps_the_dump_sentences_without_markup(tmp_path: Path) -> None:
    tree = write_dump(tmp_path / "dump")
    out = tmp_path / "s.db"
    assert run_import(tree, "--out", out).exit_code == 0
    source = SnapshotSource.open(out)
    page = source.fetch("Ed Wood")
    assert isinstance(page, Page)
    assert page.sentences == (
        "Edward Davis Wood Jr. was an American filmmaker.",
        "He was born in 1924 in the U.S. He died.",  # one sentence in the dump: kept as one
    )
    outcome = search(source, "Warner Bros.")
    assert outcome.sentences == ["Warner Bros.", "Pictures is a studio."]
    found = lookup(search(source, "Ed Wood").sentences, {}, "died")
    assert found.observation == "(Result 1 / 1) He was born in 1924 in the U.S. He died."
    assert "<a" not in page.text and "href" not in page.text
    film = source.fetch("Kiss & Tell (1945 film)")
    assert isinstance(film, Page) and film.sentences == ("Kiss & Tell is a 1945 comedy.",)
    assert source.fetch("Kiss &amp; Tell (1945 film)") == film  # the escaped title redirects


def test_links_only_text_is_read_without_markup(tmp_path: Path) -> None:
    line = record(1, "Anarchism", [])
    del line["text"]
    line["text_with_links"] = [
        'Anarchism is a <a href="political%20philosophy">political philosophy</a>.',
        ' It holds the <a href="state%20%28polity%29">state</a> harmful.',
    ]
    tree = write_dump(tmp_path / "dump", {"AA/wiki_00.bz2": [line]})
    out = tmp_path / "s.db"
    assert run_import(tree, "--out", out).exit_code == 0
    page = SnapshotSource.open(out).fetch("Anarchism")
    assert isinstance(page, Page)
    assert page.sentences == ("Anarchism is a political philosophy.", "It holds the state harmful.")


def test_disambiguation_pages_list_their_links_and_titles(tmp_path: Path) -> None:
    files = {
        **FILES,
        "AB/wiki_01.bz2": [record(40, "Jaguar", ["Jaguar may refer to:"])],
        "AB/wiki_02.bz2": [record(41, "Jaguar (band)", ["Jaguar is a band."])],
    }
    out = tmp_path / "s.db"
    assert run_import(write_dump(tmp_path / "dump", files), "--out", out).exit_code == 0
    source = SnapshotSource.open(out)
    assert source.fetch("Mercury (disambiguation)") == Disambiguation(
        "Mercury (disambiguation)",
        ["Mercury (mythology)", "Mercury (element)", "Mercury (planet)"],
    )
    assert source.fetch("Jaguar") == Disambiguation("Jaguar", ["Jaguar (band)"])
    observation = search(source, "Jaguar").observation
    assert observation == "Jaguar may refer to several pages. Similar: ['Jaguar (band)']."


def test_a_bad_line_names_file_and_line_and_leaves_no_file(tmp_path: Path) -> None:
    files = {"AA/wiki_00.bz2": [ED_WOOD, ED_WOOD], "AA/wiki_01.bz2": [ED_WOOD]}
    tree = write_dump(tmp_path / "dump", files)
    broken = bz2.decompress((tree / "AA/wiki_01.bz2").read_bytes()) + b'{"title": 3}\n{"ti'
    (tree / "AA/wiki_01.bz2").write_bytes(bz2.compress(broken))
    out = tmp_path / "s.db"
    result = run_import(tree, "--out", out)
    assert result.exit_code == 2
    assert 'AA/wiki_01.bz2:2: no "title" string (--skip-bad-lines' in flat(result.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump"]
    result = run_import(tree, "--out", out, "--skip-bad-lines")
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    assert "2 bad lines skipped" in text and "AA/wiki_01.bz2:3: not valid JSON" in text
    assert SnapshotSource.open(out).snapshot_source["skipped_lines"] == 2


@pytest.mark.parametrize("streamed", [False, True], ids=["whole-file", "streamed"])
@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_damaged_bz2_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str, streamed: bool
) -> None:
    if streamed:  # the large-file path: decompressed by the importing process, in blocks
        monkeypatch.setattr(dump_files, "WHOLE_FILE_LIMIT", 0)
    many = [record(i, f"Page {i}", [f"Page {i} is a page."]) for i in range(3000)]
    tree = write_dump(tmp_path / "dump", {"AA/wiki_00.bz2": many[:10], "AA/wiki_01.bz2": many})
    data = (tree / "AA/wiki_01.bz2").read_bytes()
    damaged = (
        data[: len(data) // 2] if damage == "truncated" else data[:200] + b"\0" * 64 + data[264:]
    )
    (tree / "AA/wiki_01.bz2").write_bytes(damaged)
    out = tmp_path / "s.db"
    result = run_import(tree, "--out", out)
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    assert "AA/wiki_01.bz2: damaged after line" in text
    assert ("truncated" in text) == (damage == "truncated")
    assert not out.exists()
    result = run_import(tree, "--out", out, "--skip-bad-lines")
    assert result.exit_code == 0 and "1 damaged files" in flat(result.output)
    assert SnapshotSource.open(out).fetch("Page 3") is not None


def test_a_dump_extends_an_existing_snapshot_in_one_transaction(tmp_path: Path) -> None:
    jsonl = tmp_path / "pages.jsonl"
    jsonl.write_text(json.dumps({"title": "Tim Burton", "text": "Tim Burton is a director."}))
    out = tmp_path / "s.db"
    assert run_import(jsonl, "--out", out).exit_code == 0
    tree = write_dump(tmp_path / "dump")
    result = run_import(tree, "--out", out)
    assert result.exit_code == 0, result.output
    source = SnapshotSource.open(out)
    assert source.fetch("Tim Burton") is not None and source.fetch("Warner Bros.") is not None
    assert [s["source"] for s in source.snapshot_source] == ["jsonl", "hotpotqa-abstracts-2017"]
    assert source.similar("Derickson")[0] == "Scott Derrickson"
    bad = write_dump(tmp_path / "bad", {"AA/wiki_00.bz2": [ED_WOOD, {"title": 1}]})
    before = out.read_bytes()
    assert run_import(bad, "--out", out).exit_code == 2
    assert out.read_bytes() == before  # rolled back


def test_the_source_lands_in_the_eval_report(tmp_path: Path) -> None:
    out = tmp_path / "s.db"
    assert run_import(write_dump(tmp_path / "dump"), "--out", out).exit_code == 0
    dataset = tmp_path / "q.json"
    dataset.write_text(json.dumps([{"_id": "q1", "question": "Ed Wood?", "answer": "1924"}]))
    script = write_script(tmp_path, ["Thought: t\nAction: Finish[1924]"])
    result = runner.invoke(
        app,
        ["eval", str(dataset), "--model", script, "--wiki", str(out)]
        + ["--out", str(tmp_path / "run")],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["settings"]["snapshot_source"]["source"] == "hotpotqa-abstracts-2017"
    assert report["settings"]["snapshot_source"]["pages"] == 7


def test_a_schema_1_snapshot_is_read_and_upgraded(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    conn = sqlite3.connect(old)
    conn.executescript(
        """CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE pages(id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE,
            norm_title TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL);
        CREATE TABLE searches(query TEXT PRIMARY KEY, titles TEXT NOT NULL);
        CREATE VIRTUAL TABLE pages_fts USING fts5(title, body, content='pages',
            content_rowid='id', tokenize='unicode61 remove_diacritics 2');
        INSERT INTO meta VALUES ('schema_version', '1');
        INSERT INTO pages VALUES (1, 'Ed Wood', 'ed wood', 'page', 'Ed Wood was a filmmaker.');
        INSERT INTO pages_fts(rowid, title, body) VALUES (1, 'Ed Wood', 'Ed Wood was a filmmaker.');
        """
    )
    conn.commit()
    conn.close()
    source = SnapshotSource.open(old)
    assert source.fetch("Ed Wood") == Page("Ed Wood", "Ed Wood was a filmmaker.")
    assert source.similar("filmmaker") == ["Ed Wood"]
    tree = write_dump(tmp_path / "dump")
    assert run_import(tree, "--out", old).exit_code == 0
    source = SnapshotSource.open(old)
    assert source.similar("Ed Woood")[0] == "Ed Wood"
    assert isinstance(source.fetch("Warner Bros."), Page)


def _slow_dump(root: Path) -> Path:
    """A dump big enough that its import is still running a second after it starts."""
    for number in range(80):
        lines = "".join(
            json.dumps(record(i, f"Page {number} {i}", [f"Page {i} is a page."] * 8)) + "\n"
            for i in range(1500)
        )
        path = root / f"AA/wiki_{number:02d}.bz2"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bz2.compress(lines.encode(), 1))
    return root


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_an_interrupted_import_leaves_nothing_under_the_final_name(
    tmp_path: Path, how: signal.Signals
) -> None:
    dump = _slow_dump(tmp_path / "dump")
    out = tmp_path / "s.db"
    command = [sys.executable, "-m", "wikireact", "snapshot", "import", str(dump)]
    process = subprocess.Popen(
        [*command, "--out", str(out), "--workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a terminal's Ctrl-C reaches the whole process group
    )
    temp = temporary_name(out, process.pid)
    deadline = time.monotonic() + 60
    while not temp.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    assert process.poll() is None, "the import ended before it could be interrupted"
    os.killpg(process.pid, how)
    _, stderr = process.communicate(timeout=60)
    assert not out.exists()
    if how == signal.SIGINT:
        assert process.returncode == 130
        assert stderr.strip().splitlines()[-1] == (
            "error: interrupted; no snapshot was written (an import starts over when run again)"
        )
        assert sorted(p.name for p in tmp_path.iterdir()) == ["dump"]
        return
    assert temp.exists()  # SIGKILL cannot clean up: the next import to `out` does
    small = write_dump(tmp_path / "small")
    result = subprocess.run([*command[:-1], str(small), "--out", str(out)], capture_output=True)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump", "s.db", "small"]


def test_hostile_dump_lines_are_bad_lines_naming_file_and_line(tmp_path: Path) -> None:
    deep = '{"title": "Deep", "text": ' + "[" * 100_000 + "]" * 100_000 + "}"
    huge = '{"title": "Huge", "text": [], "id": ' + "7" * 5000 + "}"
    path = tmp_path / "dump" / "AA" / "wiki_00.bz2"
    path.parent.mkdir(parents=True)
    lines = [json.dumps(ED_WOOD), deep, huge, json.dumps(record(2, "Fine", ["Fine."]))]
    path.write_bytes(bz2.compress("\n".join(lines).encode()))
    out = tmp_path / "s.db"
    result = run_import(tmp_path / "dump", "--out", out)
    assert result.exit_code == 2
    assert "AA/wiki_00.bz2:2: JSON nested too deeply" in flat(result.output)
    result = run_import(tmp_path / "dump", "--out", out, "--skip-bad-lines")
    assert result.exit_code == 0, result.output
    assert "AA/wiki_00.bz2:3: not readable JSON (Exceeds the limit" in flat(result.output)
    assert SnapshotSource.open(out).fetch("Fine") is not None


def test_a_bz2_bomb_is_refused_at_the_size_cap() -> None:
    unit = dump_files.Unit("AA/wiki_00.bz2", 1, bz2.compress(b"\n" * 5 * 2**20), True, True, 1)
    data, damage = dump_files.decompress(unit, 2**20)
    assert len(data) == 2**20 and damage == "it decompresses to more than 1 MiB"


@pytest.mark.parametrize(
    ("requested", "cores", "used"),
    [("10000", 2, 2), ("10000", 8, 3), ("1", 8, 1)],
    ids=["cores", "files", "as-asked"],
)
def test_workers_are_capped_at_what_can_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, requested: str, cores: int, used: int
) -> None:
    sizes: list[int] = []
    fork = multiprocessing.get_context("fork")

    class CountingPools:  # the importer's `multiprocessing`: records the pools it starts
        def get_context(self, method: str) -> CountingPools:
            return self

        def Pool(self, processes: int, **kwargs: Any) -> Any:  # noqa: N802 (multiprocessing's name)
            sizes.append(processes)
            return fork.Pool(min(processes, 2), **kwargs)

    monkeypatch.setattr(dump_import, "multiprocessing", CountingPools())
    monkeypatch.setattr(dump_import, "usable_cores", lambda: cores, raising=False)
    dump = write_dump(tmp_path / "dump")  # three files
    result = run_import(dump, "--out", tmp_path / "s.db", "--workers", requested)
    assert result.exit_code == 0, result.output
    assert sizes == [used]
    text = flat(result.output)
    assert f"by {used} workers," in text
    capped = f"note: --workers {requested} is more than can help; {used} were used"
    assert (capped in text) == (int(requested) > used)
