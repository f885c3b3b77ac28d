"""The `--approve` prompt never guesses (issue 20 item 2; issue 13 items 1, 2 and 10's `--json --approve`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from support import GOOD_RUN, QUESTION, flat, write_script
from typer.testing import CliRunner, Result

from wikireact.cli.app import app
from wikireact.models.scripted import ScriptOutput

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("data_dir")

# Step 2 proposes Tim Burton (the reviewer edits it), step 3 Lookup[born] (rejected), step 4
# Lookup[American] (approved, or interrupted), step 5 finishes.
OUTPUTS: list[ScriptOutput] = [
    GOOD_RUN[0],
    "Thought 2: Maybe Tim Burton.\nAction 2: Search[Tim Burton]",
    GOOD_RUN[2],
    "Thought 4: Check his nationality.\nAction 4: Lookup[American]",
    "Thought 5: Both are American.\nAction 5: Finish[yes]",
]
ACTIONS = [
    "Search[Scott Derrickson]",
    "Search[Ed Wood]",
    "Lookup[born]",
    "Lookup[American]",
    "Finish[yes]",
]


def ask(
    tmp_path: Path,
    snapshot_db: Path,
    answers: str,
    *extra: str,
    outputs: list[ScriptOutput] = OUTPUTS,
) -> Result:
    return runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--approve",
            "--model",
            write_script(tmp_path, outputs),
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "ap",
            *extra,
        ],
        input=answers,
    )


def test_unrecognised_answers_and_bad_edits_are_asked_again(
    tmp_path: Path, snapshot_db: Path
) -> None:
    answers = "y\nmaybe\nquit\n\ne\nLeonardo da Vinci\nSearch[Ed Wood]\nn\nnot needed\ny\n"
    result = ask(tmp_path, snapshot_db, answers, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)  # stdout is exactly one JSON object: the dialog went to stderr
    assert [s["action"] for s in out["trajectory"]] == ACTIONS
    assert out["steps"] == 5  # the bad edit was not spent as a step
    assert (
        out["trajectory"][2]["observation"] == "A human reviewer rejected Lookup[born]: not needed"
    )
    dialog = result.stderr
    assert dialog.count("Not understood") == 3  # maybe, quit and an empty answer
    assert "Not a valid action" in dialog


def test_the_thought_step_and_page_come_before_the_question(
    tmp_path: Path, snapshot_db: Path
) -> None:
    result = ask(tmp_path, snapshot_db, "y\ne\nSearch[Ed Wood]\nn\n\ny\n")
    assert result.exit_code == 0, result.output
    dialog = result.stderr
    second = dialog.index("Step 2 · open page: Scott Derrickson")
    assert (
        second
        < dialog.index("Thought 2: Maybe Tim Burton.")
        < dialog.index("Proposed action 2: Search[Tim Burton]")
        < dialog.index("Run it?", second)
    )
    assert "Step 1 · open page: (none)" in dialog
    # the live view does not repeat a Thought the prompt showed, and shows the action that ran
    assert "Thought 2:" not in result.stdout and "Action 2: Search[Ed Wood]" in result.stdout


def test_hostile_proposals_are_shown_exactly(tmp_path: Path, snapshot_db: Path) -> None:
    outputs: list[ScriptOutput] = [
        "Thought 1: \x1b]0;PWNED\x07look \u202eit up\nAction 1: Lookup[painted]",
        "Thought 2: x\nAction 2: Search[[link=https://evil.example]Mona Lisa[/link]]",
        "Thought 3: x\nAction 3: Search[Mona [/] Lisa]",
        "Thought 4: x\nAction 4: Finish[no]",
    ]
    result = ask(tmp_path, snapshot_db, "y\ny\ny\n", outputs=outputs)
    assert result.exit_code == 0, result.output
    dialog = result.stderr
    assert "Proposed action 1: Lookup[painted]" in dialog
    assert "Proposed action 2: Search[[link=https://evil.example]Mona Lisa[/link]]" in dialog
    assert "Proposed action 3: Search[Mona [/] Lisa]" in dialog
    assert "Thought 1: ]0;PWNEDlook it up" in dialog
    assert "\x1b" not in dialog and "\u202e" not in dialog
    again = runner.invoke(app, ["history", "ap"])  # the thread is not lost to the CLI
    assert again.exit_code == 0 and "Action 3: Search[Mona [/] Lisa]" in again.stdout


def test_end_of_input_at_the_prompt_leaves_the_thread_resumable(
    tmp_path: Path, snapshot_db: Path
) -> None:
    result = ask(tmp_path, snapshot_db, "y\n")  # input ends at the second prompt
    assert result.exit_code == 130
    assert "`wikireact resume ap`" in flat(result.stderr) and "Traceback" not in result.output
    resumed = runner.invoke(app, ["resume", "ap", "--json"], input="y\nn\n\ny\n")
    assert resumed.exit_code == 0, resumed.output
    out = json.loads(resumed.stdout)
    assert [s["action"] for s in out["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Tim Burton]",
        "Lookup[born]",
        "Lookup[American]",
        "Finish[yes]",
    ]
    assert "Proposed action 2: Search[Tim Burton]" in resumed.stderr


def test_the_prompt_in_a_real_terminal(tmp_path: Path, snapshot_db: Path, data_dir: Path) -> None:
    """Approve, an unrecognised answer, a bad edit, an edit, a rejection, then Ctrl-C and resume."""
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "WIKIREACT_DATA_DIR": str(data_dir), "TERM": "xterm", "NO_COLOR": "1"}
    base = [sys.executable, "-m", "wikireact"]
    child = pexpect.spawn(
        base[0],
        [
            *base[1:],
            "ask",
            QUESTION,
            "--approve",
            "--model",
            write_script(tmp_path, OUTPUTS),
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "tty",
        ],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 200),
    )
    child.expect_exact("Search[Scott Derrickson]")
    child.expect_exact("Run it?")
    child.sendline("y")
    child.expect_exact("Thought 2:")
    child.expect_exact("Search[Tim Burton]")
    child.expect_exact("Run it?")
    child.sendline("maybe")
    child.expect_exact("Not understood")
    child.sendline("e")
    child.expect_exact("Replacement action")
    child.sendline("Leonardo da Vinci")
    child.expect_exact("Not a valid action")
    child.sendline("Search[Ed Wood]")
    child.expect_exact("Lookup[born]")
    child.expect_exact("Run it?")
    child.sendline("n")
    child.expect_exact("Why?")
    child.sendline("not needed")
    child.expect_exact("Lookup[American]")
    child.expect_exact("Run it?")
    child.sendintr()
    child.expect_exact("wikireact resume tty")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130

    child = pexpect.spawn(
        base[0],
        [*base[1:], "resume", "tty"],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 200),
    )
    child.expect_exact("Action 2:")
    child.expect_exact("Search[Ed Wood]")  # the recap shows the edited action
    child.expect_exact("Lookup[American]")
    child.expect_exact("Run it?")
    child.sendline("y")
    child.expect_exact("Answer:")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    history = runner.invoke(app, ["history", "tty"])
    assert "Answer: yes" in history.stdout and "Steps: 5" in history.stdout


def test_a_reject_note_with_a_lone_surrogate_is_repaired_not_crashing() -> None:
    import io

    from rich.console import Console

    from wikireact.cli.approval import ApprovalPrompt

    answers = iter(["e", "Search[Mona \ud800Lisa]"])
    prompt = ApprovalPrompt(Console(file=io.StringIO()), read=lambda: next(answers), echo=False)
    assert prompt.ask("Run it? ") == "e"
    edited = prompt.ask("New action: ")
    assert edited == "Search[Mona \ufffdLisa]"
    edited.encode("utf-8")  # would raise UnicodeEncodeError on a lone surrogate


def test_approve_edit_reject_on_both_stores(
    tmp_path: Path, snapshot_db: Path, db_target: str
) -> None:
    answers = "y\ne\nSearch[Ed Wood]\nn\nnot needed\n"
    outputs = [GOOD_RUN[0], "Thought: x\nAction: Search[Tim Burton]", GOOD_RUN[2], GOOD_RUN[3]]
    result = runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--approve",
            "--model",
            write_script(tmp_path, outputs),
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "ap",
            "--json",
            "--db",
            db_target,
        ],
        input=answers,
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert [s["action"] for s in out["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]  # approved, edited, rejected, then the answer
    assert (
        out["trajectory"][2]["observation"] == "A human reviewer rejected Lookup[born]: not needed"
    )
