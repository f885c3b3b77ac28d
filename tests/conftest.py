"""Shared fixtures: a small Wikipedia, scripted episodes, parametrized checkpointers, PostgreSQL.

`pg_url` gives each test a fresh database on a throwaway cluster that the session starts
(`wikireact.storage.postgres.cluster`: as the `postgres` OS user when run as root) and stops at the end.
Without PostgreSQL server binaries those tests skip, saying why; under CI=true they fail.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from support import EVAL_DATA, PAGES, write_snapshot

from wikireact import MemorySource
from wikireact.errors import PgUnavailableError
from wikireact.storage.postgres.cluster import PgCluster
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.storage.threads import open_threads
from wikireact.wiki.factory import close_sources


@pytest.fixture
def wiki() -> MemorySource:
    return MemorySource(PAGES, redirects={"Edward D. Wood Jr.": "Ed Wood"})


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    try:
        cluster = PgCluster.start()
    except PgUnavailableError as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true and PostgreSQL is unavailable: {exc}")
        pytest.skip(f"PostgreSQL tests skipped: {exc}")
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """A fresh, empty database for this test (dropped afterwards)."""
    url = pg_cluster.create_database()
    yield url
    pg_cluster.drop_database(url)


@pytest.fixture(params=["sqlite", "postgres"])
def db_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A `--db` value: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "threads.db")


@pytest.fixture(params=["memory", "sqlite", "wikireact", "postgres"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver]:
    """InMemorySaver, the stock SqliteSaver, wikireact's saver (as `SqliteThreads` opens it), PostgreSQL."""
    if request.param == "memory":
        yield InMemorySaver()
    elif request.param == "wikireact":
        store = SqliteThreads(tmp_path / "threads.db")
        yield store.saver
        store.close()
    elif request.param == "postgres":
        pg_store = open_threads(str(request.getfixturevalue("pg_url")))
        yield pg_store.saver
        pg_store.close()
    else:
        conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()


# --- The environment every test runs in ---


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Give every test its own data dir and no WIKIREACT_* setting or Groq key from outside.

    Subprocesses started with `os.environ` inherit it. Shared Wikipedia sources opened by
    the test are closed after it (`close_sources`), so no test reads another's files.
    """
    for name in [n for n in os.environ if n.startswith("WIKIREACT_")] + ["GROQ_API_KEY"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WIKIREACT_DATA_DIR", str(tmp_path / "data"))
    # the paper's protocol unless a test asks for verify_finish (on by default outside tests)
    monkeypatch.setenv("WIKIREACT_VERIFY_FINISH", "off")
    yield tmp_path / "data"
    close_sources()


@pytest.fixture
def data_dir(isolated_env: Path) -> Path:
    """The test's own data dir (WIKIREACT_DATA_DIR): where `threads.db` and caches go."""
    return isolated_env


@pytest.fixture
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """No wrapping in the CLI's messages: one message is one line."""
    monkeypatch.setenv("COLUMNS", "1000")


@pytest.fixture
def snapshot_db(tmp_path: Path) -> Path:
    """A snapshot file holding PAGES."""
    return write_snapshot(tmp_path / "pages.db")


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """An evaluation's dataset file (EVAL_DATA) and snapshot file (PAGES)."""
    dataset = tmp_path / "dev.json"
    dataset.write_text(json.dumps(EVAL_DATA))
    return dataset, write_snapshot(tmp_path / "snap.db")
