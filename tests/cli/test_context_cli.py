"""The CLI when an episode outgrows the model's context window: one line, a resume hint, and a resume that continues."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fault_server import FaultServer, Reply, chat_completion
from support import GOOD_RUN, QUESTION, REWOO_LLM_RUN, ask_args, flat
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.models import registry

runner = CliRunner()
REWOO_PLAN = "Plan: Derrickson.\n#E1 = Search[Scott Derrickson]\nPlan: Wood.\n#E2 = Search[Ed Wood]"
PROMPT_CHARS = 3950
"""The fake Groq refuses a prompt longer than this (the third step's, sent whole)."""


def groq_text_reply(method: str, path: str, query: dict[str, str], body: bytes) -> Reply:
    """An OpenAI-compatible chat completion answering GOOD_RUN by step, or HTTP 400
    `context_length_exceeded` for a prompt over `PROMPT_CHARS` characters, as Groq does."""
    messages = json.loads(body)["messages"]
    if sum(len(str(m.get("content") or "")) for m in messages) > PROMPT_CHARS:
        error = {
            "message": "Please reduce the length of the messages or completion.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
        return 400, {}, json.dumps({"error": error}).encode()
    start = max(i for i, m in enumerate(messages) if str(m["content"]).startswith("Question: Were"))
    step = sum(m["role"] == "assistant" for m in messages[start:])
    return chat_completion({"role": "assistant", "content": GOOD_RUN[step]}, "stop", 900)


def test_groq_context_length_exceeded_ends_context_exhausted_and_a_fitted_resume_continues(
    tmp_path: Path, snapshot_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "threads.db")
    with FaultServer(groq_text_reply, lambda n: None) as server:
        monkeypatch.setenv("GROQ_API_KEY", "test-key")
        monkeypatch.setenv("GROQ_API_BASE", server.url)
        registry._groq.cache_clear()
        try:
            common = ["--db", db]
            first = runner.invoke(
                app,
                ["ask", QUESTION, "--model", "groq:qwen/qwen3.6-27b", "--wiki", str(snapshot_db)]
                + ["--thread-id", "long", *common],
            )
            assert first.exit_code == 1, first.output
            said = flat(first.stderr)
            assert "context window" in said and "Traceback" not in first.output
            assert "wikireact resume long --db" in said and "--context-tokens N" in said
            assert "Status: context_exhausted" in flat(first.stdout)
            resumed = runner.invoke(
                app, ["resume", "long", "--context-tokens", "1739", *common, "--json"]
            )
        finally:
            registry._groq.cache_clear()
    assert resumed.exit_code == 0, resumed.output
    result = json.loads(resumed.stdout)
    assert result["status"] == "finished" and result["answer"] == "yes"
    assert result["steps"] == 4


def test_a_larger_context_tokens_continues_a_thread_that_ran_out_of_context(
    tmp_path: Path, snapshot_db: Path
) -> None:
    db = str(tmp_path / "threads.db")
    args = [*ask_args(snapshot_db, tmp_path, GOOD_RUN), "--thread-id", "t", "--db", db]
    first = runner.invoke(app, [*args, "--context-tokens", "100"])
    assert first.exit_code == 1
    assert (
        "--context-tokens N" in flat(first.stderr) and "Status: context_exhausted" in first.stdout
    )
    resumed = runner.invoke(
        app, ["resume", "t", "--db", db, "--context-tokens", "100000", "--json"]
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["answer"] == "yes"


def test_a_model_call_budget_ends_the_episode_with_its_reason_and_raising_it_continues(
    tmp_path: Path, snapshot_db: Path
) -> None:
    db = str(tmp_path / "threads.db")
    args = [*ask_args(snapshot_db, tmp_path, GOOD_RUN), "--thread-id", "b", "--db", db]
    first = runner.invoke(app, [*args, "--max-model-calls", "2", "--json"])
    assert first.exit_code == 0, first.output
    stopped = json.loads(first.stdout)
    assert stopped["status"] == "budget_exhausted" and stopped["steps"] == 2
    assert "max_model_calls" in stopped["stop_reason"]
    resumed = runner.invoke(app, ["resume", "b", "--db", db, "--max-model-calls", "10", "--json"])
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["answer"] == "yes"


@pytest.mark.parametrize("agent", ["react", "rewoo"])
def test_json_trajectory_steps_carry_their_model_and_wikipedia_wall_times(
    tmp_path: Path, snapshot_db: Path, agent: str
) -> None:
    db = str(tmp_path / "threads.db")
    outputs = GOOD_RUN if agent == "react" else [REWOO_PLAN, "Thought: same.\nFinish[yes]"]
    args = [*ask_args(snapshot_db, tmp_path, outputs), "--agent", agent, "--db", db, "--json"]
    asked = runner.invoke(app, [*args, "--thread-id", "w"])
    assert asked.exit_code == 0, asked.output
    trajectory = json.loads(asked.stdout)["trajectory"]
    shown = runner.invoke(app, ["history", "w", "--db", db, "--json"])
    audit = json.loads(shown.stdout)["steps"]
    assert len(trajectory) == len(audit) > 1
    for step, record in zip(trajectory, audit, strict=True):
        assert step["model_seconds"] == record["model_seconds"] >= 0
        assert step["wiki_seconds"] == record["wiki_seconds"] >= 0


def test_step_wall_times_are_derived_from_an_audit_record_that_keeps_only_its_times() -> None:
    from wikireact.episode.audit import timed_trajectory

    step = {"kind": "executed", "action": "Search[Ed Wood]"}
    slim = {"model_seconds": 0.5, "started_at": "2026-12-02T03:00:00.000Z"}
    slim["ended_at"] = "2026-12-02T03:00:01.250Z"
    assert timed_trajectory([step], [slim]) == [
        {**step, "model_seconds": 0.5, "wiki_seconds": 1.25}
    ]
    assert timed_trajectory([step], []) == [step]  # no records: the steps as they are


def _rewoo_at_its_step_limit(tmp_path: Path, snapshot_db: Path, db: str) -> dict[str, Any]:
    """Ask with --agent rewoo --max-steps 4 --max-model-calls 2: the plan and one LLM step run."""
    args = [*ask_args(snapshot_db, tmp_path, REWOO_LLM_RUN), "--agent", "rewoo", "--db", db]
    first = runner.invoke(
        app, [*args, "--thread-id", "rw", "--max-steps", "4", "--max-model-calls", "2", "--json"]
    )
    assert first.exit_code == 0, first.output
    stopped: dict[str, Any] = json.loads(first.stdout)
    assert stopped["status"] == "budget_exhausted" and stopped["steps"] == 4
    assert stopped["model_calls"] == 2 and "max_model_calls" in stopped["stop_reason"]
    return stopped


def test_resume_raising_the_budget_continues_a_rewoo_thread_that_reached_its_step_limit(
    tmp_path: Path, snapshot_db: Path
) -> None:
    db = str(tmp_path / "threads.db")
    _rewoo_at_its_step_limit(tmp_path, snapshot_db, db)
    resumed = runner.invoke(app, ["resume", "rw", "--db", db, "--max-model-calls", "4", "--json"])
    assert resumed.exit_code == 0, resumed.output
    result = json.loads(resumed.stdout)
    assert result["status"] == "finished" and result["answer"] == "yes"
    assert result["model_calls"] == 4  # the plan and the first LLM step are not made again
    assert [step["kind"] for step in result["trajectory"]].count("plan") == 1
    shown = runner.invoke(app, ["history", "rw", "--db", db, "--json"])
    audit = json.loads(shown.stdout)["steps"]
    assert [record["step"] for record in audit] == [1, 2, 3, 4, 5, 6]  # each step audited once


def test_resume_max_steps_alone_on_a_rewoo_thread_out_of_calls_names_the_option_that_continues_it(
    tmp_path: Path, snapshot_db: Path
) -> None:
    """ReWOO's steps are its plan's, written already: only the budget that stopped it can continue it."""
    db = str(tmp_path / "threads.db")
    _rewoo_at_its_step_limit(tmp_path, snapshot_db, db)
    refused = runner.invoke(app, ["resume", "rw", "--db", db, "--max-steps", "10"])
    assert refused.exit_code == 2
    assert flat(refused.output) == (
        "error: thread 'rw' stopped at its max_model_calls budget (2 model calls used; the "
        "budget is 2), not its steps: resume it with --max-model-calls N (more than 2)"
    )
    resumed = runner.invoke(
        app, ["resume", "rw", "--db", db, "--max-steps", "10", "--max-model-calls", "4", "--json"]
    )
    assert resumed.exit_code == 0, resumed.output
    result = json.loads(resumed.stdout[resumed.stdout.index("{") :])
    assert (result["status"], result["answer"], result["model_calls"]) == ("finished", "yes", 4)


def test_resume_max_steps_alone_makes_no_call_past_a_react_thread_s_call_budget(
    tmp_path: Path, snapshot_db: Path
) -> None:
    db = str(tmp_path / "threads.db")
    args = [*ask_args(snapshot_db, tmp_path, GOOD_RUN), "--thread-id", "b", "--db", db]
    first = runner.invoke(app, [*args, "--max-model-calls", "2", "--json"])
    assert json.loads(first.stdout)["model_calls"] == 2
    refused = runner.invoke(app, ["resume", "b", "--db", db, "--max-steps", "10", "--json"])
    assert refused.exit_code == 2
    assert "resume it with --max-model-calls N (more than 2)" in flat(refused.output)
    shown = runner.invoke(app, ["history", "b", "--db", db, "--json"])
    assert len(json.loads(shown.stdout)["steps"]) == 2  # no third call was made


def test_resume_with_a_larger_call_budget_refuses_a_reflexion_run_it_cannot_continue(
    tmp_path: Path, snapshot_db: Path
) -> None:
    """A Reflexion run out of budget stays ended (its trials are recorded): one line says so."""
    db = str(tmp_path / "threads.db")
    wander = ["Thought 1: Look.\nAction 1: Search[Scott Derrickson]"]
    args = [*ask_args(snapshot_db, tmp_path, wander), "--agent", "reflexion", "--db", db]
    first = runner.invoke(
        app, [*args, "--thread-id", "rx", "--memory", "off", "--max-model-calls", "1", "--json"]
    )
    assert json.loads(first.stdout)["status"] == "budget_exhausted"
    again = runner.invoke(app, ["resume", "rx", "--db", db, "--max-model-calls", "5"])
    assert again.exit_code == 2
    assert flat(again.output) == (
        "error: thread 'rx' is run by the reflexion agent, which a larger --max-model-calls "
        "cannot continue: ask the question again on a new thread"
    )


def test_resume_raising_the_call_budget_of_a_thread_also_at_its_step_limit_names_max_steps(
    tmp_path: Path, snapshot_db: Path
) -> None:
    """Stopped by its calls and its steps at once: a larger call budget alone is refused in one line."""
    db = str(tmp_path / "threads.db")
    args = [*ask_args(snapshot_db, tmp_path, GOOD_RUN), "--thread-id", "b", "--db", db]
    first = runner.invoke(app, [*args, "--max-steps", "2", "--max-model-calls", "2", "--json"])
    assert json.loads(first.stdout)["status"] == "budget_exhausted"
    refused = runner.invoke(app, ["resume", "b", "--db", db, "--max-model-calls", "10"])
    assert refused.exit_code == 2
    assert flat(refused.output) == (
        "error: thread 'b' has also used its 2 steps: resume it with --max-steps N (more than 2) too"
    )
    resumed = runner.invoke(
        app, ["resume", "b", "--db", db, "--max-model-calls", "10", "--max-steps", "7", "--json"]
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout[resumed.stdout.index("{") :])["answer"] == "yes"
