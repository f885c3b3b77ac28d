"""`--agent lats` on ask, resume, history and graph; `eval --method lats` through the harness."""

from __future__ import annotations

import json
from pathlib import Path

from lats_scripts import SECOND_BRANCH, SELF_CHECKED
from support import QUESTION, SpyModel, eval_args, flat, snapshot_eval, write_script
from typer.testing import CliRunner, Result

from wikireact.cli.app import app
from wikireact.models.scripted import ScriptOutput

runner = CliRunner()
QUESTIONS = ("q1", "q2", "q3", "q4")


def ask_lats(tmp_path: Path, snapshot_db: Path, *extra: str, answers: str = "") -> Result:
    script = write_script(tmp_path, SELF_CHECKED)
    args = ["ask", QUESTION, "--agent", "lats", "--model", script, "--wiki", str(snapshot_db)]
    return runner.invoke(app, [*args, "--thread-id", "lt", *extra], input=answers)


def test_ask_agent_lats_json_then_history_shows_the_tree(tmp_path: Path, snapshot_db: Path) -> None:
    result = ask_lats(tmp_path, snapshot_db, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["answer"], out["status"], out["stopped_by"]) == ("yes", "finished", "solved")
    assert out["model_calls"] == len(SELF_CHECKED) and out["steps"] == 4
    assert out["path"] == [0, 2, 4]

    history = runner.invoke(app, ["history", "lt"])
    assert history.exit_code == 0, history.output
    shown = history.stdout
    assert "Search tree (* the answer's branch)" in shown
    assert "  - #1  depth 1  Finish[no]  value 0.00  visits 0  rejected  checkpoint " in shown
    assert "    * #4  depth 2  Finish[yes]  value 1.00  visits 0  accepted" in shown
    trail = json.loads(runner.invoke(app, ["history", "lt", "--json"]).stdout)
    assert [s["action"] for s in trail["steps"]][-1] == {
        "verb": "Finish",
        "arguments": {"answer": "yes"},
    }


def test_ask_lats_paused_for_approval_resumes_with_the_threads_agent(
    tmp_path: Path, snapshot_db: Path
) -> None:
    paused = ask_lats(tmp_path, snapshot_db, "--approve", answers="y\n")
    assert paused.exit_code != 0  # the input ended at the second Search's approval
    assert "Proposed action 1: Search[Scott Derrickson]" in flat(paused.output)
    other = runner.invoke(app, ["resume", "lt", "--agent", "react"])
    assert other.exit_code == 2 and "thread 'lt' is run by the lats agent" in flat(other.output)
    resumed = runner.invoke(app, ["resume", "lt", "--json"], input="y\n")
    assert resumed.exit_code == 0, resumed.output
    out = json.loads(resumed.stdout[resumed.stdout.index("{") :])
    assert out["answer"] == "yes" and out["model_calls"] == len(SELF_CHECKED)
    trail = json.loads(runner.invoke(app, ["history", "lt", "--json"]).stdout)
    decisions = [s["approval"]["decision"] for s in trail["steps"] if s["approval"]]
    assert decisions == ["approved", "approved"]


def test_graph_agent_lats_draws_the_search() -> None:
    drawn = runner.invoke(app, ["graph", "--agent", "lats"])
    assert drawn.exit_code == 0, drawn.output
    nodes = ("select", "expand", "act", "evaluate", "reflect", "backprop", "finish")
    assert all(f"{node}({node})" in drawn.stdout for node in nodes)


def test_eval_method_lats_judges_terminals_against_the_gold_answer(
    tmp_path: Path, files: tuple[Path, Path]
) -> None:
    dataset, snapshot = files
    script = tmp_path / "lats.json"
    guess = "Thought 1: A guess.\nAction 1: Finish[Los Angeles]"
    script.write_text(json.dumps({"outputs": {q: [guess, "Do not guess."] for q in QUESTIONS}}))
    out = tmp_path / "run"
    args = [*eval_args(dataset, snapshot, script, out), "--method", "lats"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    scored = {r["id"]: (r["answer"], r["em"]) for r in records}
    assert scored["q3"] == ("Los Angeles", 1.0)  # right: solved at the first terminal
    assert scored["q1"] == ("Los Angeles", 0.0)  # wrong, and no other branch: the best found
    assert sorted(scored) == sorted(QUESTIONS)


def test_lats_options_set_the_search_and_are_refused_for_another_agent(
    tmp_path: Path, snapshot_db: Path
) -> None:
    one = ["--candidates", "1", "--max-iterations", "1", "--json"]
    result = ask_lats(tmp_path, snapshot_db, *one)  # the guess alone, rejected by the check
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["stopped_by"], out["answer"], out["model_calls"]) == ("iterations", "no", 3)
    script = write_script(tmp_path, SELF_CHECKED)
    react = runner.invoke(app, ["ask", QUESTION, "--model", script, "--candidates", "2"])
    assert react.exit_code == 2
    assert flat(react.output) == (
        "error: --candidates belong to --agent lats (this question runs with --agent react)"
    )
    bad = ask_lats(tmp_path, snapshot_db, "--candidates", "0", "--thread-id", "bad")
    assert bad.exit_code == 2 and "candidates must be from 1 to 10" in flat(bad.output)
    assert "Traceback" not in bad.output


def test_eval_lats_with_a_model_cache_replays_every_call(
    tmp_path: Path, files: tuple[Path, Path]
) -> None:
    dataset, snapshot = files
    cache = tmp_path / "model-cache.db"
    answers = {"q2": "Poughkeepsie, New York", "q3": "Los Angeles", "q4": "no"}
    scripts: dict[str, list[ScriptOutput]] = {
        q: [f"Thought 1: I know.\nAction 1: Finish[{a}]"] for q, a in answers.items()
    }
    first_model = SpyModel(by_question={"q1": SECOND_BRANCH, **scripts})
    first = snapshot_eval(
        dataset, snapshot, tmp_path / "first", first_model, "lats", model_cache=str(cache)
    )
    calls = len(first_model.calls)
    assert calls > 0 and first["model_cache"] == {"file": str(cache), "hits": 0, "misses": calls}
    replay_model = SpyModel(outputs=["Value: 1"], fail_after=0)  # any call would fail
    replay = snapshot_eval(
        dataset, snapshot, tmp_path / "replay", replay_model, "lats", model_cache=str(cache)
    )
    assert replay_model.calls == [] and replay["model_cache"]["hits"] == calls
    records = [
        [json.loads(line)["answer"] for line in (tmp_path / run / "trajectories.jsonl").open()]
        for run in ("first", "replay")
    ]
    assert sorted(records[0]) == sorted(records[1]) == sorted(["yes", *answers.values()])
