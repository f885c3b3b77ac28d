"""One evaluation configuration, resolved once and recorded whole; resume checks; bad input."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from support import EVAL_SCRIPT, SpyModel, eval_args, snapshot_eval
from typer.testing import CliRunner, Result

from wikireact import ScriptedChatModel
from wikireact.cli.app import app
from wikireact.context import Context
from wikireact.errors import DatasetError, EvalError
from wikireact.eval.dataset import load_dataset
from wikireact.eval.harness import SETTINGS
from wikireact.models.scripted import ScriptOutput

HOSTILE_ENV = {
    "WIKIREACT_OBSERVATION_CAP": "60",
    "WIKIREACT_REPETITION_LIMIT": "2",
    "WIKIREACT_APPROVE": "1",
    "WIKIREACT_MAX_STEPS": "2",
    "WIKIREACT_WIKI": "live",
}
TIMING = ("latency_s", "model_seconds_per_step", "wiki_seconds_per_step")


def _records(out: Path) -> list[dict]:
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    return sorted(
        ({k: v for k, v in json.loads(line).items() if k not in TIMING} for line in lines),
        key=lambda r: (r["id"], r["seed"]),
    )


def _cli_eval(dataset: Path, snapshot: Path, script: Path, out: Path, *extra: str) -> Result:
    return CliRunner().invoke(
        app,
        [
            *eval_args(dataset, snapshot, script, out),
            "--concurrency",
            "2",
            *extra,
        ],
    )


def test_hostile_environment_changes_nothing(
    files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset, snapshot = files
    script = tmp_path / "script.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    clean = _cli_eval(dataset, snapshot, script, tmp_path / "clean")
    assert clean.exit_code == 0, clean.output
    for name, value in HOSTILE_ENV.items():
        monkeypatch.setenv(name, value)
    hostile = _cli_eval(dataset, snapshot, script, tmp_path / "hostile")
    assert hostile.exit_code == 0, hostile.output
    assert _records(tmp_path / "hostile") == _records(tmp_path / "clean")
    record = _records(tmp_path / "hostile")[0]
    assert record["status"] == "finished" and record["steps"] == 5  # no approval pause, budget 7
    assert len(record["trajectory"][0]["observation"]) > 60  # the observation cap is not 60
    settings = json.loads((tmp_path / "hostile" / "report.json").read_text())["settings"]
    assert settings["observation_cap"] == 1000 and settings["repetition_limit"] == 3
    assert settings["max_steps"] == 7 and settings["approve"] is False


def test_settings_hold_every_context_field_and_the_prompts(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "o",
        SpyModel(outputs=EVAL_SCRIPT),
        observation_cap=80,
        repetition_limit=4,
    )
    settings = json.loads((tmp_path / "o" / SETTINGS).read_text())
    for field in fields(Context):
        assert field.name in settings, field.name
    assert settings["observation_cap"] == 80 and settings["repetition_limit"] == 4
    assert settings["prompts_keys"] == {"react": "webthink_simple6"}
    assert settings["prompts_exemplars"] == {"webthink_simple6": 3}
    assert len(settings["prompts_sha256"]) == 64
    record = _records(tmp_path / "o")[0]
    searched = record["trajectory"][0]["observation"]  # Search[Scott Derrickson]: a long page
    assert len(searched) <= 80 and "truncated" in searched


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"observation_cap": 200}, "observation_cap"),
        ({"repetition_limit": 5}, "repetition_limit"),
        ({"max_steps": 3}, "max_steps"),
        ({"sc_samples": 5}, "sc_samples"),
    ],
)
def test_resume_refuses_other_settings_naming_them(
    files: tuple[Path, Path], tmp_path: Path, change: dict, field: str
) -> None:
    dataset, snapshot = files
    snapshot_eval(dataset, snapshot, tmp_path / "o", SpyModel(outputs=EVAL_SCRIPT))
    with pytest.raises(EvalError, match=f"settings differ \\({field}: "):
        snapshot_eval(
            dataset, snapshot, tmp_path / "o", SpyModel(outputs=EVAL_SCRIPT), **change, resume=True
        )


def test_resume_accepts_another_concurrency_and_skips_stray_lines(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    script = tmp_path / "script.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    out = tmp_path / "o"
    assert _cli_eval(dataset, snapshot, script, out).exit_code == 0
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    # One record lost, and lines that are JSON but not records (a crash, a stray edit).
    (out / "trajectories.jsonl").write_text(
        "\n".join([*lines[1:], "[1, 2]", "42", '"text"', '{"id": 3}']) + "\n"
    )
    resumed = CliRunner().invoke(
        app,
        [
            *eval_args(dataset, snapshot, script, out),
            "--concurrency",
            "1",
            "--resume",
        ],
    )
    assert resumed.exit_code == 0, resumed.output
    assert (
        json.loads((out / "report.json").read_text())["metrics"]["per_seed"]["0"]["questions"] == 4
    )
    assert json.loads((out / SETTINGS).read_text())["concurrency"] == 1


def test_duplicate_question_ids_are_refused(tmp_path: Path) -> None:
    cases = {
        "same.json": (
            [
                {"_id": "a", "question": "q1", "answer": "x"},
                {"_id": "a", "question": "q2", "answer": "y"},
            ],
            "'a' (items 0, 1)",
        ),
        "int_vs_str.json": (
            [
                {"_id": 1, "question": "q1", "answer": "x"},
                {"_id": "1", "question": "q2", "answer": "y"},
            ],
            "'1' (items 0, 1)",
        ),
        "index.json": (
            [{"question": "q1", "answer": "x"}, {"_id": "0", "question": "q2", "answer": "y"}],
            "'0' (items 0, 1)",
        ),
    }
    for name, (data, shown) in cases.items():
        path = tmp_path / name
        path.write_text(json.dumps(data))
        with pytest.raises(DatasetError, match="duplicate question ids") as raised:
            load_dataset(path)
        assert shown in str(raised.value) and "\n" not in str(raised.value)
    (tmp_path / "bad_id.json").write_text(
        json.dumps([{"_id": None, "question": "q", "answer": "x"}])
    )
    with pytest.raises(DatasetError, match="_id"):
        load_dataset(tmp_path / "bad_id.json")


def test_duplicate_ids_refused_by_the_cli(files: tuple[Path, Path], tmp_path: Path) -> None:
    _, snapshot = files
    dataset = tmp_path / "dup.json"
    dataset.write_text(
        json.dumps(
            [
                {"_id": "a", "question": "q1", "answer": "x"},
                {"_id": "a", "question": "q2", "answer": "y"},
            ]
        )
    )
    script = tmp_path / "s.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    result = CliRunner().invoke(
        app,
        [
            *eval_args(dataset, snapshot, script, tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2 and "duplicate question ids 'a'" in " ".join(result.stderr.split())
    assert not (tmp_path / "o" / "trajectories.jsonl").exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--limit", "0"),
        ("--limit", "-1"),
        ("--seeds", "0"),
        ("--seeds", "-2"),
        ("--sc-samples", "0"),
        ("--concurrency", "0"),
        ("--concurrency", "-1"),
        ("--max-steps", "0"),
        ("--repetition-limit", "1"),
        ("--observation-cap", "10"),
    ],
)
def test_meaningless_numbers_are_refused_in_one_line(
    tmp_path: Path, option: str, value: str
) -> None:
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps([{"question": "q", "answer": "a"}]))
    out = tmp_path / "o"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            str(dataset),
            "--model",
            "scripted:nowhere.json",
            "--out",
            str(out),
            option,
            value,
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and option in result.stderr, result.stderr
    assert not out.exists()


def test_default_concurrency_is_one_for_the_local_model(
    files: tuple[Path, Path],
    tmp_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # llama.cpp serves one call at a time: more threads only wait (and used to race the load).
    dataset, snapshot = files
    script = tmp_path / "script.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    done = CliRunner().invoke(
        app,
        [
            *eval_args(dataset, snapshot, script, tmp_path / "scripted"),
        ],
    )
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "scripted" / SETTINGS).read_text())["concurrency"] == 8

    from wikireact.cli import eval_command

    seen: list[int] = []

    def fake_run_eval(config: object, out: Path, **_: object) -> dict:
        seen.append(config.concurrency)  # type: ignore[attr-defined]
        raise KeyboardInterrupt  # stop before any model call; the CLI exits 130

    from wikireact.episode.resources import Resources

    monkeypatch.setattr(eval_command, "_open_eval_resources", lambda config: Resources())
    monkeypatch.setattr("wikireact.eval.run.run_eval", fake_run_eval)  # imported when eval runs
    monkeypatch.setattr(
        eval_command.os, "_exit", lambda code: (_ for _ in ()).throw(SystemExit(code))
    )
    CliRunner().invoke(app, ["eval", str(dataset), "--offline", "--out", str(tmp_path / "local")])
    CliRunner().invoke(
        app,
        [
            "eval",
            str(dataset),
            "--offline",
            "--concurrency",
            "3",
            "--out",
            str(tmp_path / "local3"),
        ],
    )
    assert seen == [1, 3]


def test_the_seed_goes_to_models_whose_client_takes_one_by_class_not_by_name() -> None:
    # The harness used to compare type(model).__name__ with "ChatGroq": a wrapper subclass
    # lost its seed, and any class named ChatGroq got one.
    from langchain_groq import ChatGroq

    from wikireact.models.sampling import per_call_sampling

    class TracedGroq(ChatGroq):
        pass

    class NotGroq(ScriptedChatModel):
        pass

    NotGroq.__name__ = "ChatGroq"
    groq = TracedGroq(model="qwen/qwen3.6-27b", api_key="k")  # type: ignore[arg-type]
    assert per_call_sampling("groq:qwen/qwen3.6-27b", groq) == {"seed": 0}
    assert per_call_sampling("groq:qwen/qwen3.6-27b", NotGroq(outputs=["x"])) == {}
    assert per_call_sampling("groq:qwen/qwen3.6-27b", None) == {"seed": 0}
    assert per_call_sampling("local", None) == {"seed": 0}
    assert per_call_sampling("scripted:s.json", None) == {}


PAPER_LIMITS = {
    "max_steps": 7,
    "context_tokens": 0,
    "keep_observations": 3,
    "max_model_calls": 0,
    "max_input_tokens": 0,
    "max_output_tokens": 0,
}
"""The paper's HotpotQA settings: 7 steps, no window set, no token or call budget."""


def test_a_default_eval_records_the_papers_settings(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    script = tmp_path / "script.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    assert _cli_eval(dataset, snapshot, script, tmp_path / "o").exit_code == 0
    settings = json.loads((tmp_path / "o" / "report.json").read_text())["settings"]
    assert {name: settings[name] for name in PAPER_LIMITS} == PAPER_LIMITS


def test_eval_takes_the_budgets_and_the_window_and_records_them(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    script = tmp_path / "script.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    given = {
        "context_tokens": 100_000,
        "max_model_calls": 2,
        "max_input_tokens": 1_000_000,
        "max_output_tokens": 1_000_000,
    }
    options = [
        str(v) if i % 2 else f"--{k.replace('_', '-')}" for k, v in given.items() for i in (0, 1)
    ]
    result = _cli_eval(dataset, snapshot, script, tmp_path / "o", *options)
    assert result.exit_code == 0, result.output
    settings = json.loads((tmp_path / "o" / "report.json").read_text())["settings"]
    assert {name: settings[name] for name in given} == given
    for record in _records(tmp_path / "o"):
        assert (record["status"], record["steps"], record["model_calls"]) == (
            "budget_exhausted",
            2,
            2,
        )


@pytest.mark.parametrize("budget", [{"max_model_calls": 2}, {"max_output_tokens": 10}])
def test_react_cot_sc_falls_back_when_a_budget_beside_the_steps_ends_react(
    files: tuple[Path, Path], tmp_path: Path, budget: dict[str, Any]
) -> None:
    dataset, snapshot = files
    votes: list[ScriptOutput] = [
        "Thought: a. So the answer is yes.",
        "Thought: b. So the answer is yes.",
        "Thought: c. So the answer is no.",
    ]
    loop: list[ScriptOutput] = [f"Thought: more.\nAction: Lookup[w{i}]" for i in range(7)]
    report = snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "o",
        SpyModel(outputs=[*votes, *loop[3:]]),
        "react-cot-sc",
        sc_samples=3,
        **budget,
    )
    mean = report["metrics"]["mean"]
    assert mean["budget_exhausted_rate"] == 1.0 and mean["switch_rate"] == 1.0
    records = _records(tmp_path / "o")
    assert all(r["answer"] == "yes" and r["steps"] < 7 for r in records)


def test_a_run_recorded_before_the_window_and_budgets_resumes_with_their_defaults(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    out = tmp_path / "o"
    snapshot_eval(dataset, snapshot, out, SpyModel(outputs=EVAL_SCRIPT))
    older = json.loads((out / SETTINGS).read_text())
    for name in PAPER_LIMITS.keys() - {"max_steps"}:
        del older[name]  # settings.json as written before these settings existed
    (out / SETTINGS).write_text(json.dumps(older))
    resumed = snapshot_eval(dataset, snapshot, out, SpyModel(outputs=EVAL_SCRIPT), resume=True)
    assert resumed["metrics"]["per_seed"]["0"]["questions"] == 4
    with pytest.raises(EvalError, match="settings differ \\(max_model_calls: 0 then, 2 now"):
        snapshot_eval(
            dataset, snapshot, out, SpyModel(outputs=EVAL_SCRIPT), max_model_calls=2, resume=True
        )


@pytest.mark.parametrize(
    ("option", "value", "field"),
    [("--context-tokens", "4096", "context_tokens"), ("--max-model-calls", "3", "max_model_calls")],
)
def test_resume_with_a_larger_window_or_budget_says_the_way_forward_in_one_line(
    files: tuple[Path, Path], tmp_path: Path, option: str, value: str, field: str
) -> None:
    """A run's questions share its settings: the refusal says how to get the larger window."""
    dataset, snapshot = files
    script = tmp_path / "script.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    out = tmp_path / "o"
    assert _cli_eval(dataset, snapshot, script, out).exit_code == 0
    refused = _cli_eval(dataset, snapshot, script, out, "--resume", option, value)
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    said = " ".join(refused.output.split())
    assert said.startswith("error: cannot resume ") and said.count("error:") == 1
    assert f"settings differ ({field}: 0 then, {value} now); a run's questions share its " in said
    assert "settings: for the new ones start a new run (another --out), or resume with " in said
    assert "the recorded ones; one question's thread goes on alone with `wikireact resume " in said
    assert f"THREAD --db {out / 'threads.db'} {option} N` (THREAD: method/seed/question id" in said
