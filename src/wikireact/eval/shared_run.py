"""One evaluation shared by many workers through PostgreSQL (`eval --db URL --run NAME`).

The run lives in the database under its name: its settings (`wikireact_eval_runs`) and
one record per (question, seed) (`wikireact_eval_records`). Any number of worker
processes, on any machines, join it by running the same command. A worker claims a
(question, seed) with the run lock of its thread (a PostgreSQL advisory lock, see
`wikireact.storage.postgres.threads`), so one worker at a time runs it; the lock dies with the
worker's connection, and another worker then continues the episode from its last
checkpoint. A record is written before its claim is released, so nothing is run again
once recorded. Every worker waits until the whole run is recorded, then writes the report,
built from the database, into its own `--out`; `eval report --db URL --run NAME` rebuilds it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from wikireact._json_text import json_line
from wikireact.errors import EvalError, LockLostError
from wikireact.eval.dataset import Item
from wikireact.eval.harness import RECORDS, REPORT, RUN_ONLY, EvalConfig, _versions, prepare_run
from wikireact.eval.methods import episode_thread, register_episode, run_method
from wikireact.eval.metrics import summarize
from wikireact.eval.workers import DaemonPool, close_after, wait_interruptibly
from wikireact.models.stack import close_stack
from wikireact.storage.postgres.threads import PostgresThreads
from wikireact.wiki.base import WikiSource

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS wikireact_eval_runs(
        name TEXT PRIMARY KEY, settings TEXT NOT NULL, report_settings TEXT NOT NULL,
        total INTEGER NOT NULL, created DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS wikireact_eval_records(
        run TEXT NOT NULL, question_id TEXT NOT NULL, seed INTEGER NOT NULL,
        record TEXT NOT NULL, worker TEXT NOT NULL, started DOUBLE PRECISION NOT NULL,
        recorded DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run, question_id, seed))""",
]
POLL_S = 0.5

Job = tuple[Item, int]


def run_identity(settings: dict[str, Any]) -> dict[str, Any]:
    """Return the settings every worker of a run must share (from `resolved_settings`).

    Those that cannot change a result (`RUN_ONLY`: concurrency, model cache, file paths
    whose contents are compared by hash) may differ, and so may the snapshot's path when
    the snapshot is pinned: its id is compared.
    """
    identity = {k: v for k, v in settings.items() if k not in RUN_ONLY}
    if "(live, not pinned)" not in str(settings.get("snapshot_id")):
        identity.pop("wiki", None)
    return identity


def _ensure_schema(store: PostgresThreads) -> None:
    with store.setup_lock(), store.pool.connection() as conn:
        for statement in _SCHEMA:
            conn.execute(statement)


def join_run(
    store: PostgresThreads,
    run: str,
    identity: dict[str, Any],
    report_settings: dict[str, Any],
    total: int,
) -> None:
    """Create the run, or join it; refuse different settings, naming the fields."""
    _ensure_schema(store)
    with store.pool.connection() as conn:
        conn.execute(
            "INSERT INTO wikireact_eval_runs VALUES (%s, %s, %s, %s, %s) ON CONFLICT (name) DO NOTHING",
            (run, json.dumps(identity), json.dumps(report_settings), total, time.time()),
        )
        row = conn.execute(
            "SELECT settings FROM wikireact_eval_runs WHERE name = %s", (run,)
        ).fetchone()
    stored = json.loads(row["settings"]) if row else {}
    if stored:
        stored.setdefault("order", "paper")  # runs created before --order took the paper's sample
    changed = sorted(k for k in stored.keys() | identity.keys() if stored.get(k) != identity.get(k))
    if changed:
        detail = ", ".join(
            f"{k}: run has {stored.get(k)!r}, this worker {identity.get(k)!r}" for k in changed
        )
        raise EvalError(
            f"run {run!r} in {store.location} has other settings ({detail}); "
            "use the same settings or another --run"
        )


def recorded_keys(store: PostgresThreads, run: str) -> set[tuple[str, int]]:
    """Return the (question id, seed) pairs recorded so far."""
    with store.pool.connection() as conn:
        rows = conn.execute(
            "SELECT question_id, seed FROM wikireact_eval_records WHERE run = %s", (run,)
        ).fetchall()
    return {(r["question_id"], r["seed"]) for r in rows}


class Claims:
    """Hands out unrecorded (question, seed) jobs, one worker at a time per job."""

    def __init__(
        self, store: PostgresThreads, run: str, jobs: list[Job], key: Callable[[Job], str]
    ) -> None:
        """Track `jobs` of `run`; `key` names a job's run lock (its thread id)."""
        self.store, self.run, self.pending, self.key = store, run, list(jobs), key
        self.mine: set[str] = set()
        self.mutex = threading.Lock()
        self.stopped = threading.Event()  # set: no more claims (a failure, Ctrl-C)

    def next(self) -> Job | None:
        """Claim a job; wait while others hold every remaining one; None when all are recorded or stopped."""
        while not self.stopped.is_set():
            with self.mutex:
                done = recorded_keys(self.store, self.run)
                self.pending = [j for j in self.pending if (j[0].id, j[1]) not in done]
                others = [j for j in self.pending if self.key(j) not in self.mine]
                if not others:
                    return None  # everything left is recorded or in this worker's hands
                for job in others:
                    if self.store.try_claim(self.key(job)):
                        if self.stopped.is_set():  # set while claiming: run nothing more
                            self.store.release(self.key(job))
                            return None
                        if (job[0].id, job[1]) in recorded_keys(self.store, self.run):
                            self.store.release(self.key(job))  # finished meanwhile
                            continue
                        self.mine.add(self.key(job))
                        return job
            self.stopped.wait(POLL_S)  # other workers hold the rest: take over if one dies
        return None

    def finish(self, job: Job, record: dict[str, Any], worker: str, started: float) -> None:
        """Store a job's record (who ran it, from when to when), then release its claim."""
        with self.store.pool.connection() as conn:
            conn.execute(
                "INSERT INTO wikireact_eval_records VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (
                    self.run,
                    job[0].id,
                    job[1],
                    json.dumps(record, ensure_ascii=False),
                    worker,
                    started,
                    time.time(),
                ),
            )
        with self.mutex:
            self.mine.discard(self.key(job))
        self.store.release(self.key(job))

    def abandon(self, job: Job) -> None:
        """Release a job's claim without a record (its episode failed)."""
        with self.mutex:
            self.mine.discard(self.key(job))
        self.store.release(self.key(job))


def shared_report(
    store: PostgresThreads, run: str, *, partial: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return the run's report and its records, built from the database.

    An unfinished run is refused, or with `partial` reported from the records it has,
    marked `partial: {done, total}` (as `wikireact.eval.partial` does for a folder).
    """
    _ensure_schema(store)
    with store.pool.connection() as conn:
        row = conn.execute(
            "SELECT report_settings, total FROM wikireact_eval_runs WHERE name = %s", (run,)
        ).fetchone()
        if row is None:
            raise EvalError(f"no run {run!r} in {store.location}")
        rows = conn.execute(
            "SELECT record FROM wikireact_eval_records WHERE run = %s ORDER BY seed, recorded",
            (run,),
        ).fetchall()
    records = [json.loads(r["record"]) for r in rows]
    if records and partial and len(records) < row["total"]:
        report = {"settings": json.loads(row["report_settings"]), "metrics": summarize(records)}
        return {**report, "partial": {"done": len(records), "total": row["total"]}}, records
    if len(records) < row["total"]:
        raise EvalError(
            f"run {run!r} is not finished: {len(records)} of {row['total']} "
            "(question, seed) pairs recorded"
        )
    return {"settings": json.loads(row["report_settings"]), "metrics": summarize(records)}, records


def write_report(out: Path, report: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """Write `report.json` and `trajectories.jsonl` into `out`, each atomically."""
    out.mkdir(parents=True, exist_ok=True)
    for name, text in (
        (RECORDS, "".join(json_line(r) for r in records)),
        (REPORT, json.dumps(report, indent=2)),
    ):
        temp = out / f"{name}.{os.getpid()}.tmp"  # workers may share one --out
        temp.write_text(text, encoding="utf-8")
        temp.replace(out / name)


def _locks_lost(store: PostgresThreads, exc: BaseException, stopped: int) -> LockLostError:
    """Return the one-line error of a worker whose run locks are gone (`exc` showed it first)."""
    reason = (
        str(exc) if isinstance(exc, LockLostError) else LockLostError.explain(store.location, exc)
    )
    episodes = f"{stopped} episode{'s' if stopped != 1 else ''}"
    return LockLostError(
        f"{reason}: this worker stopped its {episodes} in progress before their next save; "
        "other workers continue them, or run this command again (with --resume)"
    )


def run_shared_eval(
    config: EvalConfig,
    out: Path,
    *,
    db: str,
    run: str,
    model: BaseChatModel | None = None,
    wiki: WikiSource | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Work on the shared run `run` in `db` until it is complete; write and return its report."""
    import socket

    prepared = prepare_run(config, model, wiki)
    items, settings = prepared.items, prepared.settings
    try:
        store = PostgresThreads(db, pool_size=config.concurrency + 2)
    except BaseException:
        close_stack(prepared.model)
        raise
    pool = DaemonPool(config.concurrency, name="wikireact-shared")
    try:
        total = len(items) * config.seeds
        join_run(
            store,
            run,
            run_identity(settings),
            {**settings, "versions": dict(_versions()), "run": run},
            total,
        )
        # No turns: saves to the server would be waited for while holding one.
        method_settings = prepared.method_settings(
            store.saver, thread_prefix=f"{run}/", take_turns=False
        )
        jobs = [(item, seed) for seed in range(config.seeds) for item in items]
        claims = Claims(
            store,
            run,
            jobs,
            lambda job: episode_thread(method_settings, config.method, job[1], job[0]),
        )
        if on_start:
            on_start(total, len(recorded_keys(store, run)))
        worker = f"{socket.gethostname()}:{os.getpid()}"

        lost: list[BaseException] = []  # the error of each episode the lost locks stopped

        def work() -> None:
            try:
                while (job := claims.next()) is not None:
                    started = time.time()
                    try:  # the claim is the thread's run lock (the one `ask` and `resume` take)
                        register_episode(store, config.method, job[0], job[1], method_settings)
                        record = run_method(config.method, job[0], job[1], method_settings)
                    except BaseException as exc:
                        if store.lock_lost():
                            lost.append(exc)
                        claims.abandon(job)
                        raise
                    claims.finish(job, record, worker, started)
                    if on_record:
                        on_record(record)
            except BaseException:
                claims.stopped.set()  # whatever failed: the others stop after their question
                raise

        try:
            _work_until_done(pool, work, config.concurrency)
        except Exception as exc:
            if store.lock_lost():  # every save of this worker fails now: nothing forks
                raise _locks_lost(store, lost[0] if lost else exc, len(lost)) from None
            raise
        finally:
            claims.stopped.set()  # after Ctrl-C too: the workers take no other question
        report, records = shared_report(store, run)
    finally:
        # After Ctrl-C the questions running go on, unwaited (their claims die with the
        # process, and another worker continues them); the store closes once they end.
        pool.shutdown(cancel_futures=True)
        close_after(pool.unfinished(), store.close, partial(close_stack, prepared.model))
    write_report(out, report, records)
    return report


def _work_until_done(pool: DaemonPool, work: Callable[[], None], concurrency: int) -> None:
    """Run `work` on `concurrency` of `pool`'s threads until all return; raise the first error.

    A worker that fails stops the others after their current question (they see the failure
    before claiming another), so every worker ends; the wait is interruptible (Ctrl-C).
    """
    futures = [pool.submit(work) for _ in range(max(concurrency, 1))]
    wait_interruptibly(futures)
    for future in futures:
        future.result()
