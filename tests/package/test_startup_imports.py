"""A command imports what it uses: `ask` on a SQLite file never loads PostgreSQL's driver.

psycopg costs a third of a second at startup; it is imported when a PostgreSQL URL is
opened, and only then can its errors occur (`database_errors`). Each check runs a fresh
interpreter with every extra installed (`without_extras.run_cli(hide=False)`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support import GOOD_RUN, ask_args
from without_extras import run_cli, run_python

from wikireact._extras import installed

pytestmark = pytest.mark.skipif(not installed("psycopg"), reason="the postgres extra is absent")


def test_importing_the_cli_does_not_import_psycopg(tmp_path: Path) -> None:
    run = run_python("import wikireact.cli.app, wikireact.storage.threads", tmp_path, hide=False)
    assert run.code == 0, run.stderr
    assert "psycopg" not in run.packages


def test_ask_on_a_sqlite_file_does_not_import_psycopg(tmp_path: Path, snapshot_db: Path) -> None:
    args = [*ask_args(snapshot_db, tmp_path, GOOD_RUN), "--db", str(tmp_path / "threads.db")]
    run = run_cli(*args, tmp_path=tmp_path, hide=False)
    assert run.code == 0, run.stderr
    assert "Answer: yes" in run.stdout
    assert "psycopg" not in run.packages and "langgraph" in run.packages


def test_database_errors_include_psycopg_s_once_it_is_loaded() -> None:
    import psycopg

    from wikireact.storage.threads import database_errors

    assert set(database_errors()) == {sqlite3.Error, psycopg.Error}
