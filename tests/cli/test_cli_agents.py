"""`--agent` on ask, resume, history and graph: the thread registry keeps each thread's agent."""

from __future__ import annotations

import json
from pathlib import Path

from support import QUESTION, flat, write_script
from typer.testing import CliRunner, Result

from wikireact.cli.app import app

runner = CliRunner()


PLAN = (
    "Plan: Find Scott Derrickson's nationality.\n#E1 = Search[Scott Derrickson]\n"
    "Plan: Find Ed Wood's nationality.\n#E2 = Search[Ed Wood]\n"
    "Plan: Where was Wood born?\n#E3 = Lookup[born]"
)
REWOO_RUN = [PLAN, "Thought: both are American.\nFinish[yes]"]


def ask_rewoo(tmp_path: Path, snapshot_db: Path, *extra: str, answers: str = "") -> Result:
    return runner.invoke(
        app,
        [
            "ask",
            QUESTION,
            "--agent",
            "rewoo",
            "--model",
            write_script(tmp_path, REWOO_RUN),
            "--wiki",
            str(snapshot_db),
            "--thread-id",
            "rw",
            *extra,
        ],
        input=answers,
    )


def test_ask_agent_rewoo_json(tmp_path: Path, snapshot_db: Path) -> None:
    result = ask_rewoo(tmp_path, snapshot_db, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["answer"] == "yes" and out["status"] == "finished"
    assert out["model_calls"] == 2 and out["steps"] == 5
    assert [s["kind"] for s in out["trajectory"]] == [
        "plan",
        "executed",
        "executed",
        "executed",
        "finish",
    ]
    assert sum(u["input_tokens"] for u in out["usage"]) > 0


def test_ask_agent_rewoo_live_view_and_history(tmp_path: Path, snapshot_db: Path) -> None:
    result = ask_rewoo(tmp_path, snapshot_db)
    assert result.exit_code == 0, result.output
    shown = flat(result.stdout)
    assert "Action 1: #E1 = Search[Scott Derrickson] #E2 = Search[Ed Wood]" in shown
    assert "Action 4: Lookup[born]" in shown and "(Result 1 / 1) Wood was born" in shown
    assert "Status: finished" in shown and "model calls: 2" in shown
    history = runner.invoke(app, ["history", "rw", "--json"])
    assert history.exit_code == 0, history.output
    trail = json.loads(history.stdout)
    assert trail["status"] == "finished" and [s["kind"] for s in trail["steps"]][0] == "plan"


def test_resume_uses_the_threads_agent_and_refuses_another(
    tmp_path: Path, snapshot_db: Path
) -> None:
    paused = ask_rewoo(tmp_path, snapshot_db, "--approve", answers="y\n")
    assert paused.exit_code != 0  # the input ended at the second approval
    shown = flat(paused.output)
    assert "Thought 2: Find Scott Derrickson's nationality." in shown
    assert "Proposed action 2: Search[Scott Derrickson]" in shown
    other = runner.invoke(app, ["resume", "rw", "--agent", "react"])
    assert other.exit_code == 2
    assert "thread 'rw' is run by the rewoo agent" in flat(other.output)
    resumed = runner.invoke(app, ["resume", "rw", "--json"], input="y\ny\n")
    assert resumed.exit_code == 0, resumed.output
    out = json.loads(resumed.stdout[resumed.stdout.index("{") :])
    assert out["answer"] == "yes" and out["model_calls"] == 2
    history = json.loads(runner.invoke(app, ["history", "rw", "--json"]).stdout)
    decisions = [s["approval"]["decision"] for s in history["steps"] if s["approval"]]
    assert decisions == ["approved", "approved", "approved"]


def test_an_unknown_agent_is_one_line_naming_the_agents(tmp_path: Path, snapshot_db: Path) -> None:
    script = write_script(tmp_path, REWOO_RUN)
    args = ["ask", QUESTION, "--model", script, "--wiki", str(snapshot_db), "--thread-id", "t"]
    result = runner.invoke(app, [*args, "--agent", "rewo"])
    assert result.exit_code == 2
    assert flat(result.output).startswith("error: unknown agent 'rewo'; choose one of react,")
    assert "Traceback" not in result.output
    # nothing was left behind: the thread id is free for the right agent
    again = runner.invoke(app, [*args, "--agent", "rewoo", "--json"])
    assert again.exit_code == 0, again.output


def test_graph_agent_draws_that_agents_graph() -> None:
    rewoo = runner.invoke(app, ["graph", "--agent", "rewoo"])
    assert rewoo.exit_code == 0, rewoo.output
    assert all(f"{node}({node})" in rewoo.stdout for node in ("plan", "schedule", "work", "solve"))
    react = runner.invoke(app, ["graph"])
    assert "reason(reason)" in react.stdout and "plan(plan)" not in react.stdout


PE_RUN = [
    "1. Find Scott Derrickson's nationality.\n2. Find Ed Wood's nationality.",
    "Thought: his page.\nAction: Search[Scott Derrickson]",
    "Thought: American.\nAction: Finish[American]",
    "1. Find Ed Wood's nationality.",  # the 2 steps are spent: ends budget_exhausted
    "1. Find Ed Wood's nationality.",  # reopened with 6 steps: the replanner goes on
    "Thought: his page.\nAction: Search[Ed Wood]",
    "Thought: American.\nAction: Finish[American]",
    "Finish[yes]",
]


def test_resume_with_more_steps_continues_a_plan_execute_thread(
    tmp_path: Path, snapshot_db: Path
) -> None:
    model = write_script(tmp_path, PE_RUN)
    common = ["--model", model, "--wiki", str(snapshot_db), "--json"]
    first = runner.invoke(
        app,
        ["ask", QUESTION, "--agent", "plan-execute", "--thread-id", "pe", "--max-steps", "2"]
        + common,
    )
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["status"] == "budget_exhausted"
    more = runner.invoke(app, ["resume", "pe", "--max-steps", "6", *common])
    assert more.exit_code == 0, more.output
    out = json.loads(more.stdout[more.stdout.index("{") :])
    assert (out["status"], out["answer"], out["steps"]) == ("finished", "yes", 4)


def test_resume_with_more_steps_refuses_an_agent_it_cannot_reopen_in_one_line(
    tmp_path: Path, snapshot_db: Path
) -> None:
    wander = ["Thought 1: Look.\nAction 1: Search[Scott Derrickson]"]
    common = ["--model", write_script(tmp_path, wander), "--wiki", str(snapshot_db)]
    args = ["--agent", "reflexion", "--thread-id", "rx", "--max-steps", "1", "--max-trials", "1"]
    first = runner.invoke(app, ["ask", QUESTION, *args, "--memory", "off", *common])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["resume", "rx", "--max-steps", "5", *common])
    assert again.exit_code == 2
    assert flat(again.output) == (
        "error: thread 'rx' is run by the reflexion agent, which a larger --max-steps cannot "
        "continue: ask the question again on a new thread"
    )
