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


def test_known_titles_applies_to_a_local_model_over_a_snapshot_only(tmp_path: Path) -> None:
    from langchain_core.runnables import RunnableBinding

    from wikireact import Context, MemorySource, ScriptedChatModel
    from wikireact.models.local.known_titles import applies, with_known_titles
    from wikireact.models.local.llama import LlamaCppChatModel
    from wikireact.wiki.snapshot import SnapshotSource

    assert applies("local", "offline") and applies("local:/m.gguf", "pages.db")
    assert not applies("local", "live") and not applies("local", "record:pages.db")
    assert not applies("groq:qwen/qwen3.6-27b", "offline")
    with SnapshotSource.open(write_snapshot(tmp_path / "pages.db")) as snapshot:
        local = LlamaCppChatModel(model_path="")
        bound = with_known_titles(local, Context(model="local"), lambda: snapshot)
        assert isinstance(bound, RunnableBinding)
        assert bound.kwargs == {"known_titles": str((tmp_path / "pages.db").resolve())}
        off = Context(model="local", known_titles=False)
        assert with_known_titles(local, off, lambda: snapshot) is local
        assert with_known_titles(local, Context(model="local"), lambda: MemorySource({})) is local
        provider = ScriptedChatModel(outputs=[])
        assert with_known_titles(provider, Context(model="groq:x/y"), lambda: snapshot) is provider
        # WIKIREACT_MODEL=local in the environment, a provider's model object passed in: its
        # calls must not carry a keyword only llama.cpp understands (a provider refuses it).
        assert with_known_titles(provider, Context(model="local"), lambda: snapshot) is provider
