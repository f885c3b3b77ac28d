"""`--help` tells the truth: defaults visible, no placeholders, -h, --version (issue 20 item 6)."""

from __future__ import annotations

import importlib.metadata
import re

import pytest
from support import flat
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.eval.methods import METHODS

runner = CliRunner()


def help_of(*args: str, columns: int = 80) -> str:
    result = runner.invoke(app, [*args, "--help"], env={"COLUMNS": str(columns), "TERM": "xterm"})
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["ask"],
        ["resume"],
        ["history"],
        ["eval"],
        ["eval", "run"],
        ["eval", "report"],
        ["snapshot"],
        ["snapshot", "import"],
    ],
)
def test_help_has_no_placeholders_and_h_works(command: list[str]) -> None:
    text = help_of(*command)
    assert "<bool>" not in text and "{" not in text.split("\n", 2)[0]
    assert runner.invoke(app, [*command, "-h"]).stdout == text or command == []


def test_usage_names_the_arguments() -> None:
    assert "Usage: wikireact ask [OPTIONS] QUESTION" in help_of("ask")
    assert "Usage: wikireact resume [OPTIONS] THREAD" in help_of("resume")
    assert "Usage: wikireact history [OPTIONS] THREAD" in help_of("history")


def test_defaults_are_shown_one_way() -> None:
    # Click's convention: a value as is, a description in parentheses
    ask = flat(help_of("ask", columns=200))
    assert "[default: (env WIKIREACT_MODEL, else groq:qwen/qwen3.6-27b)]" in ask
    assert "[default: (env WIKIREACT_WIKI, else live)]" in ask
    assert "[default: (env WIKIREACT_MAX_STEPS, else 7)]" in ask
    resume = flat(help_of("resume", columns=200))
    assert "[default: (as the thread started)]" in resume
    run = flat(help_of("eval", "run", columns=200))
    assert (
        "[default: (eval-out/METHOD)]" in run
        and "[default: react]" in run
        and "[default: offline]" in run
    )
    assert "[default: (all)]" in run
    for text in (ask, resume, run):
        assert not re.search(r"\(default [^)]*\)", text)


def test_method_choices_are_all_listed_at_80_columns() -> None:
    text = flat(help_of("eval", "run", columns=80))
    assert f"one of {', '.join(METHODS)}" in text
    assert "…" not in help_of("eval", "run", columns=80)


def test_eval_report_has_its_own_help() -> None:
    report = help_of("eval", "report")
    assert "Usage: wikireact eval report [OPTIONS] [DIR...]" in report  # DIR is optional with --db
    assert "--method" not in report


def test_eval_dataset_shorthand_still_runs_eval_run() -> None:
    result = runner.invoke(app, ["eval", "/nonexistent/questions.json", "--method", "magic"])
    assert result.exit_code == 2 and "magic" in result.output


def test_approval_help_says_what_is_gated() -> None:
    assert (
        "Search and Lookup actions are shown for approval before they run; Finish is not."
        in flat(help_of("ask"))
    )


def test_json_is_a_flag() -> None:
    text = help_of("ask")
    assert re.search(r"--json\s+print one JSON object", text)


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"wikireact {importlib.metadata.version('wikireact')}"


def test_readme_tells_what_the_cli_does() -> None:
    """README facts that drift silently (issue 20 item 8); they moved to docs/ (issue 39)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    readme = flat("\n".join(page.read_text(encoding="utf-8") for page in pages))
    assert "writes to `eval-out/METHOD`" in readme and "[default: (eval-out/METHOD)]" in flat(
        help_of("eval", "run")
    )
    assert "`--model local` alone still searches live Wikipedia" in readme
    assert "does **not** read a `.env` file" in readme and "--no-browser" in readme
    assert "Studio's web UI is not served locally" in readme
    assert '`{"outputs": [...], "delay_s": 0.5}`' in readme and "settings.json" in readme
    assert "0.6 s per step" not in readme
    for command in (
        "resume THREAD --max-steps",
        "resume THREAD --from CHECKPOINT",
        "wikireact --version",
    ):
        assert command in readme
