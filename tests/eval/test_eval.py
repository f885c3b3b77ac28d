"""The evaluation: official scoring, the harness end to end, resume, hybrids, no gold leak."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from support import EVAL_SCRIPT, WAIT_LIMIT_S, SpyModel, snapshot_eval, wait_for_records
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.errors import DatasetError, EvalError
from wikireact.eval.baselines import Vote, extract_answer, majority_is_weak, react_needs_fallback
from wikireact.eval.dataset import load_dataset, sample
from wikireact.eval.methods import Method
from wikireact.eval.scoring import exact_match, f1_score, normalize_answer
from wikireact.models.scripted import ScriptOutput
from wikireact.wiki.snapshot import SnapshotSource


@pytest.mark.parametrize(
    ("prediction", "gold", "em", "f1"),
    [
        ("The Beatles", "Beatles", 1.0, 1.0),
        ("an apple!", "Apple", 1.0, 1.0),
        ("  yes ", "yes", 1.0, 1.0),
        ("yes", "no", 0.0, 0.0),
        ("no", "no answer", 0.0, 0.0),
        ("yes it is", "yes", 0.0, 0.0),  # gold is yes, prediction differs -> F1 0
        ("Scott Derrickson", "yes", 0.0, 0.0),
        ("noanswer", "Paris", 0.0, 0.0),
        ("New York City", "New York", 0.0, 0.8),
        ("Paris, France", "Paris", 0.0, 2 / 3),
        (None, "Paris", 0.0, 0.0),
        ("", "Paris", 0.0, 0.0),
        ("1,988", "1988", 1.0, 1.0),
        ("the the", "a", 1.0, 0.0),  # both normalise to "" -> EM 1, no tokens -> F1 0
    ],
)
def test_official_scoring(prediction: str | None, gold: str, em: float, f1: float) -> None:
    assert exact_match(prediction, gold) == em
    assert f1_score(prediction, gold) == pytest.approx(f1)


def test_normalize_answer() -> None:
    assert normalize_answer("  The  U.S. Army's  base ") == "us armys base"


def test_paper_sample_is_reproduced() -> None:
    items = [type("I", (), {"id": str(i)})() for i in range(7405)]
    import random

    idxs = list(range(7405))
    random.Random(233).shuffle(idxs)
    assert [int(i.id) for i in sample(items, 500, 233)] == idxs[:500]


def test_extract_answer() -> None:
    assert extract_answer("Thought: x. So the answer is Paris.") == "Paris"
    assert extract_answer("Answer: Soviet Union") == "Soviet Union"
    assert extract_answer("I don't know") is None


def test_hybrid_switching_rules() -> None:
    assert react_needs_fallback(None) and not react_needs_fallback("Paris")
    assert majority_is_weak(Vote("a", 10, 21))
    assert not majority_is_weak(Vote("a", 11, 21))
    assert majority_is_weak(Vote(None, 0, 5))


def test_react_harness_end_to_end(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    model = SpyModel(outputs=EVAL_SCRIPT)
    report = snapshot_eval(dataset, snapshot, tmp_path / "out", model, seeds=2)
    m = report["metrics"]["mean"]
    assert m["em"] == 0.25 and m["finish_rate"] == 1.0  # only q2's gold matches the script
    assert m["mean_steps"] == 5 and m["model_calls"] == 5
    assert m["invalid_action_rate"] == pytest.approx(1 / 5)
    assert (
        m["wiki_requests_per_question"] == 2
    )  # two Search hits; Lookup and the invalid step make none
    assert m["unsupported_finish_rate"] == 0.0  # "Poughkeepsie, New York" was observed
    assert report["metrics"]["std"]["em"] == 0.0
    settings = report["settings"]
    assert settings["snapshot_id"] == SnapshotSource.open(snapshot).snapshot_id
    assert (
        settings["max_steps"] == 7
        and settings["seeds"] == 2
        and "langgraph" in settings["versions"]
    )
    lines = (tmp_path / "out" / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 8
    assert all(
        json.loads(line)["trajectory"][4]["action"] == "Finish[Poughkeepsie, New York]"
        for line in lines
    )


def test_interrupted_run_resumes_to_identical_metrics(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    reference = snapshot_eval(dataset, snapshot, tmp_path / "ref", SpyModel(outputs=EVAL_SCRIPT))
    with pytest.raises(Exception, match="model down"):
        snapshot_eval(
            dataset, snapshot, tmp_path / "run", SpyModel(outputs=EVAL_SCRIPT, fail_after=9)
        )
    partial = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    assert len(partial) < 4
    with pytest.raises(EvalError, match="--resume"):
        snapshot_eval(dataset, snapshot, tmp_path / "run", SpyModel(outputs=EVAL_SCRIPT))
    resumed_model = SpyModel(outputs=EVAL_SCRIPT)
    resumed = snapshot_eval(dataset, snapshot, tmp_path / "run", resumed_model, resume=True)
    timing = {"latency_mean_s", "latency_p95_s"} | {
        f"step_{call}_{stat}_s" for call in ("model", "wiki") for stat in ("mean", "p95")
    }
    assert {k: v for k, v in resumed["metrics"]["mean"].items() if k not in timing} == {
        k: v for k, v in reference["metrics"]["mean"].items() if k not in timing
    }
    assert len(resumed_model.prompts) == 4 * 5 - 9  # only the calls not already made
    with pytest.raises(EvalError, match="settings differ"):
        snapshot_eval(
            dataset,
            snapshot,
            tmp_path / "run",
            SpyModel(outputs=EVAL_SCRIPT),
            max_steps=3,
            resume=True,
        )


def test_a_failed_run_raises_once_nothing_runs(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    # Three of the eight question-seeds start together; the third first call fails while the
    # first two are still waiting 0.3 s for theirs, and most others are still queued.
    model = SpyModel(outputs=EVAL_SCRIPT, fail_after=2, delay_s=0.3)
    raised: list[BaseException] = []

    def failing_run() -> None:
        try:
            snapshot_eval(dataset, snapshot, tmp_path / "run", model, concurrency=3, seeds=2)
        except Exception as exc:
            raised.append(exc)

    runner = threading.Thread(target=failing_run, daemon=True)
    runner.start()
    runner.join(30)
    assert not runner.is_alive(), "run_eval hung after a failed question"
    assert "model down" in str(raised[0])
    calls = len(model.calls)
    time.sleep(0.5)
    assert len(model.calls) == calls  # no question of the failed run goes on behind the caller
    # The store is closed, its WAL-folding thread with it (though the exception above still
    # refers to the store, so no garbage collection would have ended it).
    folding = f"wikireact-wal {tmp_path / 'run' / 'threads.db'}"
    assert folding not in [t.name for t in threading.enumerate()]


def test_cot_sc_and_hybrids(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    votes: list[ScriptOutput] = [
        "Thought: a. So the answer is yes.",
        "Thought: b. So the answer is no.",
        "Thought: c. So the answer is yes.",
        "Thought: d. So the answer is maybe.",
    ]
    report = snapshot_eval(
        dataset, snapshot, tmp_path / "sc", SpyModel(outputs=votes), "cot-sc", sc_samples=3
    )
    assert report["metrics"]["mean"]["em"] == 0.25  # majority "yes" matches q1 only
    assert report["metrics"]["mean"]["model_calls"] == 3
    record = json.loads((tmp_path / "sc" / "trajectories.jsonl").read_text().splitlines()[0])
    assert record["votes"]["votes"] == 2 and record["votes"]["samples"] == 3
    # 2 of 3 is a strong majority: cot-sc-react does not switch
    strong = snapshot_eval(
        dataset, snapshot, tmp_path / "h1", SpyModel(outputs=votes), "cot-sc-react", sc_samples=3
    )
    assert strong["metrics"]["mean"]["switch_rate"] == 0.0
    # 1 of 4 each: weak majority -> switch to ReAct (the script then acts from its start)
    weak_votes = [
        "Thought: So the answer is a.",
        "Thought: So the answer is b.",
        "Thought: So the answer is c.",
        "Thought: So the answer is d.",
        *EVAL_SCRIPT[4:],
    ]
    weak = snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "h2",
        SpyModel(outputs=weak_votes),
        "cot-sc-react",
        sc_samples=4,
    )
    assert weak["metrics"]["mean"]["switch_rate"] == 1.0
    # ReAct that never finishes -> CoT-SC fallback provides the answer
    loop = [f"Action: Lookup[w{i}]" for i in range(7)]
    fallback = snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "h3",
        SpyModel(outputs=[*votes[:2], *loop]),
        "react-cot-sc",
        sc_samples=3,
        max_steps=2,
    )
    assert fallback["metrics"]["mean"]["switch_rate"] == 1.0
    assert fallback["metrics"]["mean"]["budget_exhausted_rate"] == 1.0
    assert fallback["metrics"]["mean"]["finish_rate"] == 1.0


def test_bad_datasets_are_refused(tmp_path: Path) -> None:
    latin = tmp_path / "latin.json"
    latin.write_bytes('[{"question": "Caf\xe9?", "answer": "x"}]'.encode("latin-1"))
    cases = {
        tmp_path / "missing.json": "cannot read dataset",
        latin: "not UTF-8",
        tmp_path / "broken.json": "not valid JSON",
        tmp_path / "shape.json": "needs text fields question and answer",
        tmp_path / "empty.json": "non-empty list",
    }
    (tmp_path / "broken.json").write_text('[{"question": ')
    (tmp_path / "shape.json").write_text('[{"question": "q"}]')
    (tmp_path / "empty.json").write_text("[]")
    for path, message in cases.items():
        with pytest.raises(DatasetError, match=message):
            load_dataset(path)


def test_eval_cli_and_report(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    script = tmp_path / "script.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    runner = CliRunner()
    for method in ("react", "act"):
        result = runner.invoke(
            app,
            [
                "eval",
                str(dataset),
                "--method",
                method,
                "--model",
                f"scripted:{script}",
                "--wiki",
                str(snapshot),
                "--out",
                str(tmp_path / method),
                "--concurrency",
                "2",
            ],
        )
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["eval", "report", str(tmp_path / "react"), str(tmp_path / "act")])
    assert result.exit_code == 0, result.output
    assert "react" in result.stdout and "act" in result.stdout and "EM" in result.stdout
    bad = runner.invoke(app, ["eval", str(dataset), "--method", "magic"])
    assert bad.exit_code == 2 and "unknown method" in bad.stderr


@pytest.mark.parametrize("method", ["react", "cot", "standard", "cot-sc-react"])
def test_gold_answer_never_reaches_the_model(
    files: tuple[Path, Path], tmp_path: Path, method: Method
) -> None:
    _, snapshot = files
    dataset = tmp_path / "marked.jsonl"
    dataset.write_text(
        json.dumps({"question": "Where was Ed Wood born?", "answer": "Zq-gold-marker"}) + "\n"
    )
    model = SpyModel(outputs=[*EVAL_SCRIPT, *EVAL_SCRIPT])
    snapshot_eval(dataset, snapshot, tmp_path / "o", model, method, sc_samples=2)
    assert model.prompts and not any("Zq-gold-marker" in p for p in model.prompts)
    assert not any("correct" in p.lower() for p in model.prompts)


@pytest.mark.slow
def test_ctrl_c_in_eval_then_resume(files: tuple[Path, Path], tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    dataset, snapshot = files
    slow = tmp_path / "slow.json"
    go_on = tmp_path / "go-on"
    # The first question runs through; the second holds in its first call until `go_on` exists.
    hold = {"hold_after": len(EVAL_SCRIPT), "hold_until": str(go_on)}
    slow.write_text(json.dumps({"outputs": EVAL_SCRIPT, **hold}))
    out = tmp_path / "run"
    args = [
        sys.executable,
        "-m",
        "wikireact",
        "eval",
        str(dataset),
        "--method",
        "react",
        "--model",
        f"scripted:{slow}",
        "--wiki",
        str(snapshot),
        "--out",
        str(out),
        "--concurrency",
        "1",
    ]
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    records = out / "trajectories.jsonl"
    wait_for_records(records, 1, proc)  # now inside the second question, held
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "--resume" in " ".join(stderr.split()) and "Traceback" not in stderr
    assert records.read_text().count("\n") == 1
    go_on.touch()
    resumed = subprocess.run(
        [*args, "--resume"], capture_output=True, text=True, env=env, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["metrics"]["mean"]["em"] == 0.25 and report["metrics"]["mean"]["mean_steps"] == 5
    assert len(records.read_text().splitlines()) == 4


INTERRUPTED_EVAL = """
import atexit, sys
from wikireact.cli.app import main
atexit.register(lambda: print("atexit handlers ran", flush=True))
try:
    main()
finally:
    print("finally blocks ran", flush=True)
"""


@pytest.mark.slow
def test_ctrl_c_in_eval_runs_finally_blocks_without_waiting_for_questions(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    # Ctrl-C used to end `eval` with os._exit(130): no finally block, no atexit handler.
    # It ends the command as any error does now, without waiting for the question in
    # flight (held in its first model call until a file that never appears): that question
    # is resumed by --resume.
    import os
    import signal
    import subprocess
    import sys

    dataset, snapshot = files
    slow = tmp_path / "slow.json"
    never = tmp_path / "never"
    slow.write_text(json.dumps({"outputs": EVAL_SCRIPT, "hold_until": str(never)}))
    out = tmp_path / "run"
    args = [sys.executable, "-c", INTERRUPTED_EVAL, "eval", str(dataset), "--model"]
    args += [f"scripted:{slow}", "--wiki", str(snapshot), "--out", str(out), "--concurrency", "1"]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    deadline = time.monotonic() + WAIT_LIMIT_S
    while not (out / "threads.db").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # the run has started (the question is held: it never ends)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=WAIT_LIMIT_S)  # ends, though the question never would
    assert proc.returncode == 130, stderr
    assert "--resume" in " ".join(stderr.split()) and "Traceback" not in stderr
    assert "finally blocks ran" in stdout and "atexit handlers ran" in stdout
