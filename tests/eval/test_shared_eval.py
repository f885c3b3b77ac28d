"""One evaluation, many workers (PostgreSQL), and one process per output directory (SQLite)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pydantic import PrivateAttr
from support import METRIC_TIMES, WAIT_LIMIT_S, wait_for_records, write_snapshot
from typer.testing import CliRunner

from wikireact import ScriptedChatModel
from wikireact.cli.app import app
from wikireact.errors import EvalError
from wikireact.eval.harness import EvalConfig
from wikireact.eval.run import run_eval
from wikireact.models.scripted import ScriptOutput
from wikireact.wiki.snapshot import SnapshotSource

SCRIPT: list[ScriptOutput] = [
    "Thought: look him up.\nAction: Search[Scott Derrickson]",
    "Thought: next.\nAction: Serch[Ed Wood]",
    "Thought: again.\nAction: Search[Ed Wood]",
    "Thought: born?\nAction: Lookup[born]",
    "Thought: done.\nAction: Finish[Poughkeepsie, New York]",
]


def write_files(tmp_path: Path, questions: int) -> tuple[Path, Path]:
    dataset = tmp_path / "dev.json"
    dataset.write_text(
        json.dumps(
            [
                {
                    "_id": f"q{i}",
                    "question": f"Where was Ed Wood born ({i})?",
                    "answer": "Poughkeepsie, New York" if i % 3 else "Los Angeles",
                }
                for i in range(questions)
            ]
        )
    )
    snapshot = write_snapshot(tmp_path / "snap.db")
    return dataset, snapshot


def config(dataset: Path, snapshot: Path, **kw: Any) -> EvalConfig:
    return EvalConfig(
        **{
            "dataset": str(dataset),
            "method": "react",
            "model": "scripted",
            "wiki": str(snapshot),
            "sample_seed": None,
            "concurrency": 3,
            **kw,
        }
    )


def same_metrics(a: dict[str, Any], b: dict[str, Any]) -> bool:
    strip = lambda m: {k: v for k, v in m.items() if k not in METRIC_TIMES}  # noqa: E731
    return (
        strip(a["mean"]) == strip(b["mean"])
        and all(strip(a["per_seed"][s]) == strip(b["per_seed"][s]) for s in a["per_seed"])
        and a["per_seed"].keys() == b["per_seed"].keys()
    )


def checkpoints_per_thread(url: str, run: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT thread_id, count(*) FROM checkpoints WHERE thread_id LIKE %s GROUP BY thread_id",
            (run + "/%",),
        ).fetchall()
    return {thread.removeprefix(run + "/"): n for thread, n in rows}


def test_shared_run_reports_what_one_process_reports(tmp_path: Path, pg_url: str) -> None:
    dataset, snapshot = write_files(tmp_path, 6)
    source = SnapshotSource.open(snapshot)
    single = run_eval(
        config(dataset, snapshot, seeds=2),
        tmp_path / "single",
        model=ScriptedChatModel(outputs=SCRIPT),
        wiki=source,
    )
    shared = run_eval(
        config(dataset, snapshot, seeds=2),
        tmp_path / "w1",
        db=pg_url,
        run="r1",
        model=ScriptedChatModel(outputs=SCRIPT),
        wiki=source,
    )
    assert same_metrics(shared["metrics"], single["metrics"]) and shared["metrics"]["mean"][
        "em"
    ] == pytest.approx(4 / 6)
    assert len((tmp_path / "w1" / "trajectories.jsonl").read_text().splitlines()) == 12
    # a second worker joining a finished run makes no model call and writes the same report
    late = run_eval(
        config(dataset, snapshot, seeds=2, concurrency=1),
        tmp_path / "w2",
        db=pg_url,
        run="r1",
        model=ScriptedChatModel(outputs=[]),
        wiki=source,
    )
    assert late["metrics"] == shared["metrics"]
    rebuilt = CliRunner().invoke(
        app, ["eval", "report", "--db", pg_url, "--run", "r1", "--out", str(tmp_path / "any")]
    )
    assert rebuilt.exit_code == 0, rebuilt.output
    assert (
        json.loads((tmp_path / "any" / "report.json").read_text())["metrics"] == shared["metrics"]
    )


def test_an_unfinished_shared_run_is_reported_as_partial(tmp_path: Path, pg_url: str) -> None:
    dataset, snapshot = write_files(tmp_path, 4)
    run_eval(
        config(dataset, snapshot),
        tmp_path / "w",
        db=pg_url,
        run="cut",
        model=ScriptedChatModel(outputs=SCRIPT),
        wiki=SnapshotSource.open(snapshot),
    )
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as if two questions were not done
        conn.execute(
            "DELETE FROM wikireact_eval_records WHERE run = 'cut' AND question_id IN ('q0', 'q1')"
        )
    out = tmp_path / "report"
    result = CliRunner().invoke(
        app, ["eval", "report", "--db", pg_url, "--run", "cut", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "partial: 2 of 4 done" in result.stdout
    assert json.loads((out / "report.json").read_text())["partial"] == {"done": 2, "total": 4}


def test_a_worker_with_other_settings_is_refused_naming_the_field(
    tmp_path: Path, pg_url: str
) -> None:
    dataset, snapshot = write_files(tmp_path, 2)
    source = SnapshotSource.open(snapshot)
    run_eval(
        config(dataset, snapshot),
        tmp_path / "a",
        db=pg_url,
        run="r",
        model=ScriptedChatModel(outputs=SCRIPT),
        wiki=source,
    )
    with pytest.raises(
        EvalError, match=r"run 'r' .* other settings \(max_steps: run has 7, this worker 5\)"
    ):
        run_eval(
            config(dataset, snapshot, max_steps=5),
            tmp_path / "b",
            db=pg_url,
            run="r",
            model=ScriptedChatModel(outputs=SCRIPT),
            wiki=source,
        )
    unfinished = CliRunner().invoke(app, ["eval", "report", "--db", pg_url, "--run", "nope"])
    assert unfinished.exit_code == 2 and "no run 'nope'" in unfinished.stderr
    sqlite = CliRunner().invoke(app, ["eval", str(dataset), "--db", str(tmp_path / "x.db")])
    assert sqlite.exit_code == 2 and "postgresql://" in sqlite.stderr
    no_db = CliRunner().invoke(app, ["eval", str(dataset), "--run", "r"])
    assert no_db.exit_code == 2 and "needs --db" in no_db.stderr


def _eval_args(dataset: Path, snapshot: Path, script: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "wikireact",
        "eval",
        str(dataset),
        "--method",
        "react",
        "--model",
        f"scripted:{script}",
        "--wiki",
        str(snapshot),
        "--out",
        str(out),
        *extra,
    ]


def _records_in(url: str, run: str) -> int:
    with psycopg.connect(url) as conn:
        try:
            row = conn.execute(
                "SELECT count(*) FROM wikireact_eval_records WHERE run = %s", (run,)
            ).fetchone()
        except psycopg.errors.UndefinedTable:  # no worker has started yet
            return 0
    return int(row[0]) if row else 0


def _single_process_report(
    tmp_path: Path, dataset: Path, snapshot: Path, pg_url: str, env: dict[str, str]
) -> dict[str, Any]:
    """Run the whole dataset in one process as run `single` (unheld); return its report."""
    fast = tmp_path / "fast.json"
    fast.write_text(json.dumps(SCRIPT))
    single = subprocess.run(
        _eval_args(dataset, snapshot, fast, tmp_path / "one", "--db", pg_url, "--run", "single"),
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT_LIMIT_S,
    )
    assert single.returncode == 0, single.stderr
    report: dict[str, Any] = json.loads((tmp_path / "one" / "report.json").read_text())
    return report


@pytest.mark.slow
def test_three_workers_one_killed_then_resumed(tmp_path: Path, pg_url: str) -> None:
    dataset, snapshot = write_files(tmp_path, 24)
    slow = tmp_path / "slow.json"
    go_on = tmp_path / "go-on"
    # Each worker makes 10 model calls (at least one question of 5 calls finished), then
    # holds until `go_on` exists: at most 6 of the 24 questions are done when one is killed.
    hold = {"hold_after": 10, "hold_until": str(go_on)}
    slow.write_text(json.dumps({"outputs": SCRIPT, **hold}))
    env = {**os.environ, "COLUMNS": "200"}
    common = ("--db", pg_url, "--run", "shared", "--concurrency", "2")
    workers = [
        subprocess.Popen(
            _eval_args(dataset, snapshot, slow, tmp_path / f"w{i}", *common),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(3)
    ]
    deadline = time.monotonic() + WAIT_LIMIT_S
    while _records_in(pg_url, "shared") < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # three questions done (each worker finishes one before it holds)
    workers[0].send_signal(signal.SIGKILL)  # mid-run, with episodes in flight
    workers[0].wait()
    assert 3 <= _records_in(pg_url, "shared") <= 6
    go_on.touch()
    resumed = subprocess.run(
        _eval_args(dataset, snapshot, slow, tmp_path / "w0", *common, "--resume"),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    for worker in workers[1:]:
        _, stderr = worker.communicate(timeout=300)
        assert worker.returncode == 0, stderr
    reference = _single_process_report(tmp_path, dataset, snapshot, pg_url, env)
    assert _records_in(pg_url, "shared") == 24
    for i in range(3):
        report = json.loads((tmp_path / f"w{i}" / "report.json").read_text())
        assert same_metrics(report["metrics"], reference["metrics"])
        lines = (tmp_path / f"w{i}" / "trajectories.jsonl").read_text().splitlines()
        assert sorted((json.loads(x)["id"], json.loads(x)["seed"]) for x in lines) == sorted(
            (f"q{n}", 0) for n in range(24)
        )
    # no episode ran twice: every thread has exactly the checkpoints of a single-process run
    assert checkpoints_per_thread(pg_url, "shared") == checkpoints_per_thread(pg_url, "single")


class FailingFirstCall(ScriptedChatModel):
    """A scripted model whose first call raises; the others take `delay_s` each."""

    _calls: list[int] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        with self._lock:
            self._calls.append(1)
            first = len(self._calls) == 1
        if first:
            raise RuntimeError("the model failed")
        return super()._generate(messages, stop, run_manager, **kw)


def test_a_failed_question_stops_the_other_workers_after_their_question(
    tmp_path: Path, pg_url: str
) -> None:
    dataset, snapshot = write_files(tmp_path, 8)
    with pytest.raises(Exception, match="the model failed"):
        run_eval(
            config(dataset, snapshot, concurrency=2),
            tmp_path / "w",
            db=pg_url,
            run="r",
            model=FailingFirstCall(outputs=SCRIPT, delay_s=0.3),
            wiki=SnapshotSource.open(snapshot),
        )
    # the failed question and the one running beside it; no other question was claimed
    assert len(checkpoints_per_thread(pg_url, "r")) <= 2
    assert _records_in(pg_url, "r") <= 1


@pytest.mark.slow
def test_ctrl_c_stops_a_shared_worker_and_another_continues_its_question(
    tmp_path: Path, pg_url: str
) -> None:
    # Ctrl-C used to leave a shared worker running: the main thread's KeyboardInterrupt
    # waited (in the executor's exit) for the worker threads, which went on claiming
    # questions until the run was complete, and a held question kept it alive for ever.
    dataset, snapshot = write_files(tmp_path, 4)
    slow = tmp_path / "slow.json"
    go_on = tmp_path / "go-on"
    slow.write_text(json.dumps({"outputs": SCRIPT, "hold_after": 7, "hold_until": str(go_on)}))
    env = {**os.environ, "COLUMNS": "200"}
    common = ("--db", pg_url, "--run", "shared", "--concurrency", "1")
    worker = subprocess.Popen(
        _eval_args(dataset, snapshot, slow, tmp_path / "w", *common),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + WAIT_LIMIT_S
        while _records_in(pg_url, "shared") < 1 and time.monotonic() < deadline:
            time.sleep(0.05)  # q0 done; q1 is held in its third model call
        worker.send_signal(signal.SIGINT)
        _, stderr = worker.communicate(timeout=WAIT_LIMIT_S)
    finally:
        worker.kill()
    assert worker.returncode == 130, stderr
    assert "--resume" in " ".join(stderr.split()) and "Traceback" not in stderr
    assert _records_in(pg_url, "shared") == 1  # no question was claimed after Ctrl-C
    go_on.touch()
    resumed = subprocess.run(  # the interrupted worker's claim died with it
        _eval_args(dataset, snapshot, slow, tmp_path / "w2", *common),
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT_LIMIT_S,
    )
    assert resumed.returncode == 0, resumed.stderr
    reference = _single_process_report(tmp_path, dataset, snapshot, pg_url, env)
    report = json.loads((tmp_path / "w2" / "report.json").read_text())
    assert same_metrics(report["metrics"], reference["metrics"])
    # q1 went on from its last checkpoint: no step of it ran twice
    assert checkpoints_per_thread(pg_url, "shared") == checkpoints_per_thread(pg_url, "single")


@pytest.mark.slow
def test_two_eval_resumes_on_one_directory_do_not_both_run(tmp_path: Path) -> None:
    dataset, snapshot = write_files(tmp_path, 4)
    held = tmp_path / "held.json"
    go_on = tmp_path / "go-on"
    # The first process answers its first question (5 calls), then holds until `go_on`
    # exists: the second starts while the first surely runs, however slow the machine.
    held.write_text(json.dumps({"outputs": SCRIPT, "hold_after": 5, "hold_until": str(go_on)}))
    out = tmp_path / "run"
    env = {**os.environ, "COLUMNS": "200"}
    args = _eval_args(dataset, snapshot, held, out, "--concurrency", "1")
    first = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    records = out / "trajectories.jsonl"
    wait_for_records(records, 1, first)
    second = subprocess.run(
        [*args, "--resume"], capture_output=True, text=True, env=env, timeout=120
    )
    go_on.touch()
    _, stderr = first.communicate(timeout=120)
    assert second.returncode == 2, second.stderr
    assert f"another `wikireact eval` is working in {out}" in " ".join(second.stderr.split())
    assert first.returncode == 0, stderr
    ids = [json.loads(line)["id"] for line in records.read_text().splitlines()]
    assert sorted(ids) == ["q0", "q1", "q2", "q3"]  # each recorded once


def test_a_shared_run_records_and_reports_what_one_process_does(
    tmp_path: Path, pg_url: str
) -> None:
    """Same records (error categories included, which need `supporting_facts`) and same report."""
    dataset = tmp_path / "facts.json"
    dataset.write_text(
        json.dumps(
            [
                {
                    "_id": f"q{i}",
                    "question": f"Where did Ed Wood die ({i})?",
                    "answer": "Los Angeles" if i % 2 else "Poughkeepsie, New York",
                    # Tim Burton's page is never opened: a search miss, though the gold
                    # answer was seen ("He died in Los Angeles.")
                    "supporting_facts": [["Ed Wood", 4], ["Tim Burton", 0]],
                }
                for i in range(4)
            ]
        )
    )
    snapshot = write_snapshot(tmp_path / "snap.db")
    source = SnapshotSource.open(snapshot)
    extras: dict[str, dict[str, Any]] = {"single": {}, "shared": {"db": pg_url, "run": "facts"}}
    reports = {
        name: run_eval(
            config(dataset, snapshot, seeds=2),
            tmp_path / name,
            model=ScriptedChatModel(outputs=SCRIPT),
            wiki=source,
            **extra,
        )
        for name, extra in extras.items()
    }

    def records(name: str) -> list[dict[str, Any]]:
        lines = (tmp_path / name / "trajectories.jsonl").read_text().splitlines()
        times = ("latency_s", "model_seconds_per_step", "wiki_seconds_per_step")
        rows = [{k: v for k, v in json.loads(x).items() if k not in times} for x in lines]
        return sorted(rows, key=lambda r: (r["id"], r["seed"]))

    assert records("shared") == records("single")
    assert {r["category"] for r in records("shared")} == {"correct", "search_miss"}
    strip = lambda m: {k: v for k, v in m.items() if k not in METRIC_TIMES}  # noqa: E731
    single, shared = reports["single"]["metrics"], reports["shared"]["metrics"]
    assert strip(shared["mean"]) == strip(single["mean"])
    assert (
        shared["categories"]
        == single["categories"]
        == {
            **dict.fromkeys(single["categories"], 0),
            "correct": 4,
            "search_miss": 4,
        }
    )
    assert shared["categories_per_seed"] == single["categories_per_seed"]
