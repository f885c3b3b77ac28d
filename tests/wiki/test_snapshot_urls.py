"""A URL where a file is expected is refused in one line that never shows its password (issue 34, item 5).

`--wiki postgresql://u:PW@host/x` printed the password in "unknown wiki source", and
`snapshot import --out postgresql://u:PW@host:5432/x` (and `eval --out`) exited 0, printed
it and created the folders `./postgresql:/u:PW@host:5432/`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import GOOD_RUN, QUESTION, flat, write_script, write_snapshot
from test_dump_import import run_import
from typer.testing import CliRunner, Result

from wikireact.cli.app import app
from wikireact.errors import WikiConfigurationError
from wikireact.wiki.factory import open_source

runner = CliRunner()
SECRET = "MySecret"
URL = f"postgresql://u:{SECRET}@127.0.0.1:5432/x"
SHOWN = "postgresql://u:***@127.0.0.1:5432/x"


def assert_refused_without_password(result: Result, tmp_path: Path, expected: str) -> None:
    """One line naming the URL without its password, nothing created in the working folder."""
    output = result.output
    assert result.exit_code == 2, output
    assert SECRET not in output and "Traceback" not in output
    assert len(output.strip().splitlines()) == 1 and expected in flat(output), output
    assert not (tmp_path / "postgresql:").exists()


@pytest.mark.parametrize(
    "wiki", [URL, f"{URL}.db", f"record:{URL}.db"], ids=["url", "db", "record"]
)
def test_a_url_as_the_wiki_is_refused_without_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wiki: str
) -> None:
    monkeypatch.chdir(tmp_path)
    dataset = tmp_path / "dev.json"
    dataset.write_text(json.dumps([{"_id": "q", "question": "Who?", "answer": "x"}]))
    script = write_script(tmp_path, GOOD_RUN)
    commands = [
        ["ask", QUESTION, "--model", script, "--wiki", wiki],
        ["eval", str(dataset), "--model", script, "--wiki", wiki, "--out", str(tmp_path / "run")],
    ]
    for args in commands:
        result = runner.invoke(app, args)
        assert_refused_without_password(result, tmp_path, f"unknown wiki source '{SHOWN}")
    with pytest.raises(WikiConfigurationError) as refused:
        open_source(wiki)
    assert SECRET not in str(refused.value) and SHOWN in str(refused.value)


def test_a_url_as_the_eval_folder_is_refused_without_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    dataset = tmp_path / "dev.json"
    dataset.write_text(json.dumps([{"_id": "q", "question": "Who?", "answer": "x"}]))
    snapshot = write_snapshot(tmp_path / "s.db")
    script = write_script(tmp_path, GOOD_RUN)
    args = ["eval", str(dataset), "--model", script, "--wiki", str(snapshot), "--out", URL]
    result = runner.invoke(app, args)
    assert_refused_without_password(
        result, tmp_path, f"eval --out takes a folder, not a URL ({SHOWN})"
    )


@pytest.mark.parametrize("given_as", ["out", "input"])
def test_a_url_as_a_snapshot_file_is_refused_without_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given_as: str
) -> None:
    monkeypatch.chdir(tmp_path)
    pages = tmp_path / "p.jsonl"
    pages.write_text(json.dumps({"title": "Ed Wood", "text": "Ed Wood was a filmmaker."}))
    if given_as == "out":
        result = run_import(pages, "--out", URL)
        expected = f"--out takes a snapshot file, not a URL ({SHOWN})"
    else:
        result = run_import(f"{URL}/p.jsonl", "--out", tmp_path / "s.db")
        expected = f"snapshot import reads files, not a URL ({SHOWN}/p.jsonl)"
    assert_refused_without_password(result, tmp_path, f"error: {expected}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]
