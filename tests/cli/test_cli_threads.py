"""`wikireact threads`: list, prune, delete, vacuum and stats on a SQLite file and on PostgreSQL.

Threads are real episodes of the CLI (`ask` with a scripted model): finished ones, and
some out of budget (2 steps) that `resume --max-steps 5` continues. Pruning must leave
what every thread reads as (`history --json`, `history`'s transcript, `resume`), skip a
thread another process runs, and with `--dry-run` change nothing.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import GOOD_RUN, ask_args, flat
from typer.testing import CliRunner, Result

from wikireact.cli.app import app

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("data_dir", "wide_terminal")
FINISHED = ("f0", "f1", "f2")
OUT_OF_BUDGET = ("b0", "b1")
KEPT = "k0"
"""Out of budget like b0/b1, never pruned: what a resumed pruned thread must equal."""


def cli(*args: str) -> Result:
    return runner.invoke(app, list(args))


@pytest.fixture
def db(db_target: str, tmp_path: Path, snapshot_db: Path) -> str:
    """A store holding FINISHED, OUT_OF_BUDGET and KEPT threads."""
    for thread_id in (*FINISHED, *OUT_OF_BUDGET, KEPT):
        budget = ["--max-steps", "2"] if thread_id[0] in "bk" else []
        result = cli(
            *ask_args(snapshot_db, tmp_path, GOOD_RUN, f"{thread_id}.json"),
            "--db",
            db_target,
            "--thread-id",
            thread_id,
            "--json",
            *budget,
        )
        assert result.exit_code == 0, result.output
    return db_target


def listed(db: str, *args: str) -> list[dict[str, Any]]:
    result = cli("threads", "list", "--db", db, "--json", *args)
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout))


def reads(db: str, thread_id: str) -> tuple[str, str]:
    """`history --json`, and `history`'s transcript (what it prints before the checkpoints)."""
    as_json = cli("history", thread_id, "--db", db, "--json")
    text = cli("threads", "show", thread_id, "--db", db)
    assert as_json.exit_code == 0 and text.exit_code == 0, as_json.output + text.output
    return as_json.stdout, text.stdout.split("Checkpoints, newest first")[0]


def resumed(db: str, thread_id: str, tmp_path: Path) -> dict[str, Any]:
    from support import untimed_result, write_script

    script = write_script(tmp_path, GOOD_RUN, f"resume-{thread_id}.json")
    result = cli("resume", thread_id, "--db", db, "--max-steps", "5", "--json", "--model", script)
    assert result.exit_code == 0, result.output
    out = untimed_result(result.stdout)  # the steps' wall times differ from run to run
    return {k: out[k] for k in ("answer", "status", "steps", "trajectory")}


def test_list_shows_every_thread_and_filters(db: str) -> None:
    rows = listed(db)
    assert [r["thread_id"] for r in rows] == sorted((*FINISHED, *OUT_OF_BUDGET, KEPT))
    finished = listed(db, "--status", "finished")
    assert {r["thread_id"] for r in finished} == set(FINISHED)
    assert {(r["status"], r["steps"], r["agent"], r["task"]) for r in finished} == {
        ("finished", 4, "react", "hotpotqa")
    }
    assert all(r["checkpoints"] > 5 and r["bytes"] > 0 for r in rows)
    assert listed(db, "--older-than", "30d") == []
    text = cli("threads", "list", "--db", db)
    assert "THREAD" in text.stdout and "budget_exhausted" in text.stdout
    assert "6 threads" in flat(text.stdout)


def test_prune_keeps_what_every_thread_reads_and_resumes(db: str, tmp_path: Path) -> None:
    pruned = (*FINISHED, *OUT_OF_BUDGET)
    before = {t: reads(db, t) for t in pruned}

    result = cli("threads", "prune", *pruned, "--db", db)

    assert result.exit_code == 0, result.output
    assert "prune 5 threads" in flat(result.stdout)
    rows = {r["thread_id"]: r for r in listed(db)}
    assert all(rows[t]["checkpoints"] == 1 for t in pruned) and rows[KEPT]["checkpoints"] > 1
    assert {t: reads(db, t) for t in pruned} == before
    expected = resumed(db, KEPT, tmp_path)
    assert expected["answer"] == "yes" and expected["steps"] == 4
    assert [resumed(db, t, tmp_path) for t in OUT_OF_BUDGET] == [expected, expected]


def test_vacuum_gives_the_space_back(db: str) -> None:
    assert cli("threads", "prune", "--all", "--db", db).exit_code == 0
    result = cli("threads", "vacuum", "--db", db, "--full")
    assert result.exit_code == 0, result.output
    sizes = flat(result.stdout).split(": ")[-1].removesuffix(" bytes").split(" -> ")
    before, after = (int(s.replace(",", "")) for s in sizes)
    print(f"vacuum: {before:,} -> {after:,} bytes")
    assert after < before


@pytest.fixture
def lock_holder(db: str) -> Iterator[str]:
    """Another process that holds f1's run lock (as a running episode does)."""
    code = (
        "import sys\nfrom wikireact.storage.threads import open_threads\n"
        "s = open_threads(sys.argv[1])\nassert s.try_claim('f1')\n"
        "print('held', flush=True)\nsys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield "f1"
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)


def test_a_running_thread_is_skipped_and_named(db: str, lock_holder: str) -> None:
    before = listed(db)
    for command in ("prune", "delete"):
        result = cli("threads", command, "--status", "finished", "--db", db)
        assert result.exit_code == 0, result.output
        assert "skipped 1 running threads" in flat(result.stdout) and "f1" in result.stdout
    rows = {r["thread_id"]: r for r in listed(db)}
    assert rows.keys() == {"f1", *OUT_OF_BUDGET, KEPT}
    assert rows["f1"] == next(r for r in before if r["thread_id"] == "f1")


def digest(db: str) -> list[str]:
    return [
        hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (Path(db), Path(db + "-wal"))
        if p.exists()
    ]


def test_dry_run_changes_nothing(db: str) -> None:
    before, rows = (digest(db) if "://" not in db else []), listed(db)
    for command in ("prune", "delete"):
        result = cli("threads", command, "--all", "--dry-run", "--db", db)
        assert result.exit_code == 0, result.output
        assert f"would {command} 6 threads" in flat(result.stdout)
    assert listed(db) == rows
    if "://" not in db:
        assert digest(db) == before  # byte-identical file


def test_delete_removes_the_thread_entirely(db: str) -> None:
    result = cli("threads", "delete", "b0", "--db", db)
    assert result.exit_code == 0, result.output
    assert "b0" not in {r["thread_id"] for r in listed(db)}
    assert cli("history", "b0", "--db", db).exit_code != 0


def test_stats_counts_threads_tables_and_largest(db: str) -> None:
    result = cli("threads", "stats", "--db", db, "--json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["threads"] == 6 and stats["checkpoints"] > 6 * 5
    assert stats["tables"]["checkpoints"] > 0 and stats["total_bytes"] > 0
    assert len(stats["largest"]) == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["threads", "prune"], "say which threads"),
        (["threads", "prune", "--older-than", "3x", "--all"], "bad duration '3x'"),
        (["threads", "delete", "nope"], "unknown thread id(s): 'nope'"),
        (["threads", "prune", "--policy"], "--policy needs WIKIREACT_KEEP"),
    ],
)
def test_bad_input_is_one_line(db: str, args: list[str], message: str) -> None:
    result = cli(*args, "--db", db)
    assert result.exit_code == 2 and message in flat(result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_postgres_password_is_never_shown() -> None:
    result = cli("threads", "list", "--db", "postgresql://me:s3cr3t@127.0.0.1:1/db")
    assert result.exit_code == 2 and "s3cr3t" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


# --- Retention: WIKIREACT_KEEP ---


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        ("latest", (("latest", 0.0),)),
        ("latest:7d, delete:90d", (("latest", 7 * 86400.0), ("delete", 90 * 86400.0))),
        ("latest:12h", (("latest", 12 * 3600.0),)),
    ],
)
def test_policy_is_parsed(text: str, rules: tuple[Any, ...]) -> None:
    from wikireact.storage.retention import parse_policy

    assert parse_policy(text).rules == rules


@pytest.mark.parametrize("text", ["keep", "delete", "latest:7", "latest:d", ","])
def test_a_bad_policy_is_refused(text: str) -> None:
    from wikireact.errors import ConfigurationError
    from wikireact.storage.retention import parse_policy

    with pytest.raises(ConfigurationError, match="WIKIREACT_KEEP|duration"):
        parse_policy(text)


def test_prune_policy_prunes_ended_threads_past_their_age(
    db: str, monkeypatch: pytest.MonkeyPatch, lock_holder: str
) -> None:
    monkeypatch.setenv("WIKIREACT_KEEP", "latest:30d")
    result = cli("threads", "prune", "--policy", "--db", db)
    assert result.exit_code == 0 and "prune 0 threads, delete 0" in flat(result.stdout)
    monkeypatch.setenv("WIKIREACT_KEEP", "latest")
    dry = cli("threads", "prune", "--policy", "--dry-run", "--db", db)
    assert "would prune 5 threads" in flat(dry.stdout) and "f1" in dry.stdout  # f1 skipped
    result = cli("threads", "prune", "--policy", "--db", db)
    assert "prune 5 threads, delete 0" in flat(result.stdout), result.output
    assert "skipped 1 running threads" in flat(result.stdout)
    rows = {r["thread_id"]: r["checkpoints"] for r in listed(db)}
    assert rows.pop("f1") > 1 and set(rows.values()) == {1}


def test_a_finished_episode_applies_the_policy(
    db: str, tmp_path: Path, snapshot_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIKIREACT_KEEP", "latest")
    args = ask_args(snapshot_db, tmp_path, GOOD_RUN, "new.json")
    result = cli(*args, "--db", db, "--thread-id", "new", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["answer"] == "yes"
    assert "WIKIREACT_KEEP: pruned 7 threads, deleted 0" in flat(result.stderr)
    assert {r["checkpoints"] for r in listed(db)} == {1}


def test_a_bad_policy_stops_an_episode_before_it_runs(
    db: str, tmp_path: Path, snapshot_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIKIREACT_KEEP", "latest:soon")
    args = ask_args(snapshot_db, tmp_path, GOOD_RUN, "new.json")
    result = cli(*args, "--db", db, "--thread-id", "new")
    assert result.exit_code == 2 and "bad duration 'soon'" in flat(result.stderr)
    assert "new" in {r["thread_id"] for r in listed(db)}  # registered, not run


def test_the_same_listing_on_sqlite_and_postgres(
    tmp_path: Path, snapshot_db: Path, pg_url: str
) -> None:
    found = []
    for db in (str(tmp_path / "threads.db"), pg_url):
        for thread_id, budget in (("a", "10"), ("b", "2")):
            args = ask_args(snapshot_db, tmp_path, GOOD_RUN, f"{thread_id}.json")
            result = cli(*args, "--db", db, "--thread-id", thread_id, "--max-steps", budget)
            assert result.exit_code == 0, result.output
        found.append(
            [{k: v for k, v in r.items() if k not in ("bytes", "updated")} for r in listed(db)]
        )
    assert found[0] == found[1] and [r["status"] for r in found[0]] == [
        "finished",
        "budget_exhausted",
    ]


def test_a_reflexion_thread_prunes_and_deletes_with_its_lessons(
    tmp_path: Path, snapshot_db: Path
) -> None:
    """Its trials are checkpointed in their own namespaces; its lessons live in the store."""
    from support import QUESTION, write_script

    wander = "Thought 1: Let me look.\nAction 1: Search[Scott Derrickson]"
    lesson = "Search both people first, then answer."
    finish = "Thought 1: Both are American.\nAction 1: Finish[yes]"
    db = str(tmp_path / "threads.db")
    for thread_id in ("r1", "r2"):
        script = write_script(tmp_path, [wander, lesson, finish], f"{thread_id}.json")
        result = cli(
            "ask", QUESTION, "--agent", "reflexion", "--model", script, "--wiki", str(snapshot_db),
            "--db", db, "--thread-id", thread_id, "--max-steps", "1", "--json",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    before = reads(db, "r1")
    assert cli("threads", "prune", "r1", "--db", db).exit_code == 0
    assert reads(db, "r1") == before and json.loads(before[0])["answer"] == "yes"

    def lessons() -> list[str]:
        from wikireact.agents.reflexion.memory import question_namespace
        from wikireact.storage.long_term import open_store

        with open_store(db) as store:
            return sorted(item.key for item in store.search(question_namespace(QUESTION)))

    assert lessons() == ["r1:1", "r2:1"]
    assert cli("threads", "delete", "r2", "--db", db).exit_code == 0
    assert lessons() == ["r1:1", "r2:1"]  # kept unless asked
    assert cli("threads", "delete", "r1", "--lessons", "--db", db).exit_code == 0
    assert lessons() == ["r2:1"]


def test_an_evaluation_applies_the_policy_as_questions_end(
    files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support import EVAL_SCRIPT, snapshot_eval

    from wikireact import ScriptedChatModel

    monkeypatch.setenv("WIKIREACT_KEEP", "latest")
    report = snapshot_eval(*files, tmp_path / "run", ScriptedChatModel(outputs=EVAL_SCRIPT))
    assert report["metrics"]["mean"]["finish_rate"] == 1.0
    rows = listed(str(tmp_path / "run" / "threads.db"))
    assert len(rows) == 4 and {r["checkpoints"] for r in rows} == {1}
