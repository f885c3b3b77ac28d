"""`known_titles`: a local model over a snapshot searches only the snapshot's titles, through the real model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import EVAL_DATA, PAGES, QUESTION, write_snapshot
from tiny_gguf import write_tiny_model
from typer.testing import CliRunner

from wikireact.cli.app import app

pytest.importorskip("llama_cpp")
runner = CliRunner()
_SEARCH = re.compile(r"^Action \d+: Search\[(.*)\]$", re.MULTILINE)


def _searches(tmp_path: Path, *options: str) -> list[str]:
    """Run two steps of the tiny GGUF model over the test snapshot; return what it searched."""
    tiny = write_tiny_model(tmp_path / "tiny.gguf")
    snapshot = write_snapshot(tmp_path / "pages.db")
    done = runner.invoke(
        app,
        ["ask", QUESTION, "--model", f"local:{tiny}", "--wiki", str(snapshot), "--json"]
        + ["--max-steps", "2", *options],
    )
    assert done.exit_code == 0, done.output
    steps = json.loads(done.stdout)["trajectory"]
    return [found for step in steps for found in _SEARCH.findall(step["raw"])]


def test_a_search_decoded_under_known_titles_names_a_title_of_the_snapshot(
    tmp_path: Path, data_dir: Path
) -> None:
    searched = _searches(tmp_path)
    assert searched and all(title in PAGES for title in searched), searched
    # the second step may not search the first title again: the guard rail holds
    assert searched == ["Scott Derrickson", "Ed Wood"]


def test_without_known_titles_the_same_model_spells_what_it_likes(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIKIREACT_KNOWN_TITLES", "off")
    searched = _searches(tmp_path)
    assert searched and not any(title in PAGES for title in searched), searched


def test_eval_reports_record_known_titles_as_it_applies(tmp_path: Path, data_dir: Path) -> None:
    tiny = write_tiny_model(tmp_path / "tiny.gguf")
    snapshot = write_snapshot(tmp_path / "pages.db")
    dataset = tmp_path / "dev.json"
    dataset.write_text(json.dumps(EVAL_DATA[:1]))
    recorded = {}
    for name, options in {"on": [], "off": ["--no-known-titles"]}.items():
        out = tmp_path / name
        done = runner.invoke(
            app,
            ["eval", str(dataset), "--model", f"local:{tiny}", "--wiki", str(snapshot)]
            + ["--max-steps", "1", "--out", str(out), *options],
        )
        assert done.exit_code == 0, done.output
        recorded[name] = json.loads((out / "report.json").read_text())["settings"]["known_titles"]
    assert recorded == {"on": True, "off": False}
