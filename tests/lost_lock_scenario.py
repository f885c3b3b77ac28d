"""A shared evaluation whose worker loses its lock connection mid-run (issue 25, item 3).

Worker A runs `wikireact eval --db URL --run shared`; once it is mid-episode, the server
ends A's session that holds its run locks (`pg_terminate_backend`, as a network failure
or a server restart would). Worker B starts at once, then A is run again with `--resume`.
Every worker is a real `wikireact eval` process with a scripted model that appends one
line per model call to a shared log, so calls paid twice can be counted.

`run_scenario(cluster, tmp)` plays it on a fresh database and returns its `Outcome`;
`tests/storage/test_lost_lock.py` asserts on one, `bench/lost_lock.py` (`make reliability`)
reports several. `python lost_lock_scenario.py --worker LOG ARGS...` is the worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from wikireact.storage.postgres.cluster import PgCluster

QUESTIONS = 6
DELAY_S = 0.4
STEPS = 10
SCRIPT = [
    "Thought: look.\nAction: Search[Ed Wood]",
    *(f"Thought: more {i}.\nAction: Lookup[word{i}]" for i in range(STEPS - 3)),
    "Thought: born?\nAction: Lookup[born]",
    "Thought: done.\nAction: Finish[Poughkeepsie, New York]",
]
"""Ten steps, each a new action (a repeated one would end the episode)."""


@dataclass
class Outcome:
    """What one scenario showed."""

    fenced_line: str
    """Worker A's error line after it lost its locks ("" if it printed none)."""
    a_returncode: int
    other_failures: list[str]
    """Anything else that went wrong (a worker's error, a missing report), as text."""
    recorded: list[tuple[str, int]]
    """The (question, seed) pairs in the database, one entry per record."""
    forks: list[str]
    """Threads with two checkpoints on one parent (something ran twice)."""
    steps_per_thread: dict[str, int]
    reference_steps: dict[str, int]
    """Checkpoints per thread of the same run in one uninterrupted worker."""
    calls: Counter[tuple[str, str]]
    """(question id, call index) -> times the model was called for it, all workers."""
    calls_by_a_at_loss: set[str]
    """Questions whose model call by A was in flight or done when its session ended."""
    seconds: float

    @property
    def repeated_calls(self) -> int:
        """Model calls made more than once (each extra one was paid twice)."""
        return sum(n - 1 for n in self.calls.values() if n > 1)

    def problems(self) -> list[str]:
        """Everything that went wrong (empty: the scenario went as it must).

        A must stop with one line; every (question, seed) is recorded once; no thread has
        two checkpoints on one parent, and each has an uninterrupted run's checkpoints; the
        only model calls made twice are ones A had in flight when its session ended (their
        replies could not be saved), at most one per question.
        """
        found = list(self.other_failures)
        if not self.fenced_line or self.a_returncode != 1:
            found.append("worker A did not stop with one line")
        if sorted(self.recorded) != sorted((f"q{i}", 0) for i in range(QUESTIONS)):
            found.append(f"records: {sorted(self.recorded)}")
        if self.forks:
            found.append(f"forked threads: {self.forks}")
        if self.steps_per_thread != self.reference_steps:
            found.append(f"checkpoints {self.steps_per_thread} != {self.reference_steps}")
        repeated = Counter(q for (q, _), n in self.calls.items() for _ in range(n - 1))
        if not set(repeated) <= self.calls_by_a_at_loss or any(n > 1 for n in repeated.values()):
            found.append(f"model calls repeated beyond those in flight: {dict(repeated)}")
        return found


def worker(log: str, args: list[str]) -> int:
    """Run `wikireact ARGS` with the scripted model logging every call to `log`."""
    from wikireact.cli.app import main
    from wikireact.models.call_metadata import CALL_INDEX_KEY, QUESTION_ID_KEY
    from wikireact.models.scripted import ScriptedChatModel

    original = ScriptedChatModel._generate

    def logged(
        self: ScriptedChatModel,
        messages: Any,
        stop: Any = None,
        run_manager: Any = None,  # LangChain passes it only to a method that names it
        **kwargs: Any,
    ) -> Any:
        metadata = getattr(run_manager, "metadata", None) or {}
        with open(log, "a", encoding="utf-8") as sink:  # one short append: atomic
            sink.write(
                f"{metadata.get(QUESTION_ID_KEY)} {metadata.get(CALL_INDEX_KEY)} {os.getpid()}\n"
            )
        return original(self, messages, stop, run_manager, **kwargs)

    ScriptedChatModel._generate = logged  # type: ignore[method-assign]
    sys.argv = ["wikireact", *args]
    main()
    return 0


def _eval(tmp: Path, url: str, run: str, out: str, *extra: str) -> list[str]:
    """`wikireact eval` as a worker of `run` (the reference run logs and waits elsewhere)."""
    name = "reference" if run == "reference" else "calls"
    return [
        sys.executable,
        __file__,
        "--worker",
        str(tmp / f"{name}.log"),
        "eval",
        str(tmp / "dev.json"),
        "--model",
        f"scripted:{tmp / (name + '.json')}",
        "--wiki",
        str(tmp / "snap.db"),
        "--max-steps",
        str(STEPS + 2),
        "--db",
        url,
        "--run",
        run,
        "--out",
        str(tmp / out),
        *extra,
    ]


def _query(url: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            return conn.execute(sql, params).fetchall()
        except psycopg.errors.UndefinedTable:  # no worker has created the tables yet
            return []


def _calls(tmp: Path) -> list[tuple[str, str, str]]:
    log = tmp / "calls.log"
    if not log.exists():
        return []
    return [tuple(line.split()) for line in log.read_text().splitlines()]  # type: ignore[misc]


def _steps(url: str, run: str) -> dict[str, int]:
    rows = _query(
        url,
        "SELECT thread_id, count(*) FROM checkpoints WHERE thread_id LIKE %s GROUP BY thread_id",
        run + "/%",
    )
    return {str(t).removeprefix(run + "/"): int(n) for t, n in rows}


def _start(command: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def run_scenario(cluster: PgCluster, tmp: Path) -> Outcome:
    """Play the scenario on a fresh database of `cluster`, in the empty directory `tmp`."""
    from support import write_snapshot

    started = time.perf_counter()
    url = cluster.create_database()
    (tmp / "dev.json").write_text(
        json.dumps(
            [
                {"_id": f"q{i}", "question": f"Where was Ed Wood born ({i})?", "answer": "x"}
                for i in range(QUESTIONS)
            ]
        )
    )
    (tmp / "calls.json").write_text(json.dumps({"outputs": SCRIPT, "delay_s": DELAY_S}))
    (tmp / "reference.json").write_text(json.dumps({"outputs": SCRIPT}))
    write_snapshot(tmp / "snap.db")
    env = {**os.environ, "COLUMNS": "300"}
    failures: list[str] = []
    a = _start(_eval(tmp, url, "shared", "wA", "--concurrency", "2"), env)
    deadline = time.time() + 120
    while time.time() < deadline and len(_calls(tmp)) < 3 and a.poll() is None:
        time.sleep(0.05)  # A is inside its first two episodes
    locks = _query(url, "SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted")
    at_loss = {q for q, _, _ in _calls(tmp)}
    for (pid,) in locks:  # only A holds run locks in this database
        _query(url, "SELECT pg_terminate_backend(%s)", pid)
    b = _start(_eval(tmp, url, "shared", "wB", "--concurrency", "2"), env)
    _, a_err = a.communicate(timeout=300)
    errors = [line for line in a_err.splitlines() if line.startswith("error:")]
    fenced = errors[0] if len(errors) == 1 and "lost the connection" in errors[0] else ""
    if not fenced:
        failures.append(
            f"worker A (rc {a.returncode}) did not say it lost its locks: {a_err[-800:]}"
        )
    _, b_err = b.communicate(timeout=300)
    if b.returncode != 0:
        failures.append(f"worker B failed (rc {b.returncode}): {b_err[-800:]}")
    resumed = subprocess.run(
        _eval(tmp, url, "shared", "wA", "--concurrency", "2", "--resume"),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if resumed.returncode != 0:
        failures.append(f"--resume failed (rc {resumed.returncode}): {resumed.stderr[-800:]}")
    for out in ("wA", "wB"):
        records = tmp / out / "trajectories.jsonl"
        lines = records.read_text().splitlines() if records.exists() else []
        if sorted(json.loads(x)["id"] for x in lines) != sorted(f"q{i}" for i in range(QUESTIONS)):
            failures.append(f"{out}/trajectories.jsonl does not hold every question once")
    calls = Counter((q, i) for q, i, _ in _calls(tmp))
    reference = subprocess.run(  # the same run, uninterrupted, in one worker
        _eval(tmp, url, "reference", "ref", "--concurrency", "2"),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if reference.returncode != 0:
        failures.append(f"the reference run failed: {reference.stderr[-800:]}")
    forks = _query(
        url,
        "SELECT DISTINCT thread_id FROM checkpoints WHERE parent_checkpoint_id IS NOT NULL "
        "GROUP BY thread_id, checkpoint_ns, parent_checkpoint_id HAVING count(*) > 1",
    )
    outcome = Outcome(
        fenced_line=fenced,
        a_returncode=a.returncode,
        other_failures=failures,
        recorded=[
            (str(q), int(s))
            for q, s in _query(
                url, "SELECT question_id, seed FROM wikireact_eval_records WHERE run = 'shared'"
            )
        ],
        forks=[str(t) for (t,) in forks],
        steps_per_thread=_steps(url, "shared"),
        reference_steps=_steps(url, "reference"),
        calls=calls,
        calls_by_a_at_loss=at_loss,
        seconds=time.perf_counter() - started,
    )
    cluster.drop_database(url)
    return outcome


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
        sys.exit(worker(sys.argv[2], sys.argv[3:]))
    sys.exit("usage: lost_lock_scenario.py --worker LOG ARGS...")
