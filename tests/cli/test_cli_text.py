"""Text that reaches the terminal: literal (no Rich markup), free of control characters, not hard-wrapped.

Issue 13 items 1-2 and issue 20 item 7.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from support import GOOD_RUN, QUESTION, ask_args, flat, write_script
from typer.testing import CliRunner

from wikireact.cli.app import app

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("data_dir")

HOSTILE_THOUGHT = (
    "Thought 1: see \x1b]0;PWNED\x07 and \x1b[2J cleared \u202eevil\u202c [bold red]loud[/] :smile:"
)


def unsafe(text: str) -> list[str]:
    """Characters a terminal would act on: controls (other than newline), bidi and format characters."""
    return [
        c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")
    ]


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["resume", "[/]", "--db", "{db}"], "unknown thread id '[/]'"),
        (["ask", "q", "--model", "x[/]"], "x[/]"),
        (["ask", "q", "--model", "{script}", "--wiki", "n[/].db"], "n[/].db"),
        (["history", "[bold red]boom", "--db", "{db}"], "'[bold red]boom'"),
    ],
)
def test_user_text_in_errors_is_shown_literally(
    tmp_path: Path, snapshot_db: Path, args: list[str], shown: str
) -> None:
    db = tmp_path / "threads.db"
    runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN),
            "--db",
            str(db),
        ],
    )
    script = write_script(tmp_path, GOOD_RUN, "other.json")
    result = runner.invoke(
        app, [a.replace("{db}", str(db)).replace("{script}", script) for a in args]
    )
    assert result.exit_code == 2, result.output
    assert shown in result.stderr and "Traceback" not in result.output
    assert "MarkupError" not in result.output


def test_reused_thread_id_hint_names_the_real_id(tmp_path: Path, snapshot_db: Path) -> None:
    db = tmp_path / "other.db"
    args = [
        *ask_args(snapshot_db, tmp_path, GOOD_RUN),
        "--thread-id",
        "[bold red]boom",
        "--db",
        str(db),
    ]
    assert runner.invoke(app, args).exit_code == 0
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "'[bold red]boom' already exists" in again.stderr
    assert f"`wikireact resume '[bold red]boom' --db {db.resolve()}`" in flat(again.stderr)


def test_import_error_shows_the_expected_shape(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question": "q", "answer": "a", "context": [["only a title"]]}]))
    result = runner.invoke(app, ["snapshot", "import", str(bad), "--out", str(tmp_path / "s.db")])
    assert result.exit_code != 0
    assert "[title, [sentences]]" in result.stderr


def test_model_text_is_literal_and_cleaned_in_the_live_view(
    tmp_path: Path, snapshot_db: Path
) -> None:
    outputs = [
        f"{HOSTILE_THOUGHT}\nAction 1: Search[Scott Derrickson]",
        "Thought 2: done\nAction 2: Finish[[link=https://evil.example]yes[/link] \x1b[31mred]",
    ]
    result = runner.invoke(
        app,
        ["ask", QUESTION, "--model", write_script(tmp_path, outputs), "--wiki", str(snapshot_db)],
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert unsafe(out) == []
    assert "[bold red]loud[/] :smile:" in out  # markup and emoji codes shown as typed
    assert "]0;PWNED" in out and "[2J cleared evil" in out  # the text stays, the escapes go
    assert "Answer: [link=https://evil.example]yes[/link] [31mred" in out


def test_json_output_keeps_the_exact_text_escaped(tmp_path: Path, snapshot_db: Path) -> None:
    thought = HOSTILE_THOUGHT.removeprefix("Thought 1: ")
    outputs = [
        f"{HOSTILE_THOUGHT}\nAction 1: Search[Scott Derrickson]",
        "Thought 2: ok\nAction 2: Finish[a\u202eb\x7f]",
    ]
    result = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--json",
            "--model",
            write_script(tmp_path, outputs),
            "--wiki",
            str(snapshot_db),
        ],
    )
    assert result.exit_code == 0, result.output
    assert unsafe(result.stdout.strip()) == []  # escaped as \uXXXX, so printing it is harmless
    out = json.loads(result.stdout)
    assert out["trajectory"][0]["thought"] == thought
    assert out["answer"] == "a\u202eb\x7f"


def test_budget_exhausted_says_no_answer_and_why(tmp_path: Path, snapshot_db: Path) -> None:
    loop = [f"Thought: more\nAction: Lookup[w{i}]" for i in range(5)]
    result = runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, loop),
            "--max-steps",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Answer: no answer (budget of 3 steps used)" in result.stdout
    assert "None" not in result.stdout


def test_piped_output_is_not_hard_wrapped(tmp_path: Path, snapshot_db: Path) -> None:
    long_thought = "I need to find out where Scott Derrickson was born " * 6
    outputs = [f"Thought 1: {long_thought}\nAction 1: Search[Scott Derrickson]", GOOD_RUN[3]]
    result = runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, outputs),
            "--thread-id",
            "w1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"Thought 1: {long_thought.strip()}\n" in result.stdout
    history = runner.invoke(app, ["history", "w1"])
    assert f"Thought 1: {long_thought.strip()}\n" in history.stdout
