"""A PostgreSQL password is never printed; the CLI takes it from PGPASSWORD, a password file or a service file.

libpq's URL errors quote the text they could not parse (the password included), and a
resume hint used to repeat the whole `--db` URL. Messages now show the URL without its
password, and a hint's command leaves the password out and says where to give it.
"""

from __future__ import annotations

import json
import re
import shlex
import uuid
from pathlib import Path

import pytest
from support import GOOD_RUN, ask_args, flat, write_script
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.storage.postgres.cluster import PgCluster
from wikireact.storage.postgres.url import has_password, hide_password, redacted, without_password

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("data_dir")
SECRET = "MySecret"


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://u:My {SECRET}@127.0.0.1:1/db",
        f"postgresql://u:p%zz{SECRET}@127.0.0.1:1/db",
        f"postgresql://u:{SECRET}@[::1/db",
        f"postgresql://u@127.0.0.1:1/db?password={SECRET}&bogus=1",
        f"postgresql://u:{SECRET}@127.0.0.1:1/db?sslmode=nonsense",
    ],
)
def test_a_url_libpq_cannot_parse_is_refused_without_its_password(
    tmp_path: Path, snapshot_db: Path, url: str
) -> None:
    dataset = tmp_path / "dev.json"
    dataset.write_text(json.dumps([{"_id": "q", "question": "Who?", "answer": "x"}]))
    commands = [
        ["history", "t", "--db", url],
        [*ask_args(snapshot_db, tmp_path, GOOD_RUN), "--db", url],
        [
            "eval",
            str(dataset),
            "--model",
            write_script(tmp_path, GOOD_RUN),
            "--wiki",
            str(snapshot_db),
            "--db",
            url,
            "--out",
            str(tmp_path / "out"),
        ],
        ["eval", "report", "--db", url, "--run", "r"],
    ]
    for args in commands:
        result = runner.invoke(app, args)
        assert result.exit_code in (1, 2), (args, result.output)
        assert SECRET not in result.output and "My%20" not in result.output, result.output
        message = flat(result.stderr)
        assert "not a valid PostgreSQL URL" in message or "cannot connect to" in message, message
        assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) <= 3


def hint_in(stderr: str) -> list[str]:
    """The resume command an error message tells the user to run, as argv."""
    match = re.search(r"`(wikireact resume [^`]+)`", flat(stderr))
    assert match, stderr
    return shlex.split(match.group(1))[1:]


@pytest.mark.parametrize("given_by", ["PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE"])
def test_hints_leave_the_password_out_and_the_cli_takes_it_from_libpq_settings(
    tmp_path: Path, snapshot_db: Path, pg_cluster: PgCluster, pg_url: str, given_by: str
) -> None:
    role, password = f"r{uuid.uuid4().hex[:8]}", f"{SECRET}-{uuid.uuid4().hex[:6]}"
    pg_cluster.add_password_role(role, password)
    plain = pg_url.replace("postgres@", f"{role}@", 1)  # ...://ROLE@127.0.0.1:PORT/DB
    with_password = plain.replace(f"{role}@", f"{role}:{password}@", 1)
    first = runner.invoke(
        app,
        [
            *ask_args(snapshot_db, tmp_path, GOOD_RUN[:2], "short.json"),
            "--thread-id",
            "t",
            "--db",
            with_password,
        ],
    )
    assert first.exit_code == 1, first.output
    assert password not in first.output
    argv = hint_in(first.stderr)
    assert argv[argv.index("--db") + 1] == plain
    assert "PGPASSWORD" in flat(first.stderr) and ".pgpass" in flat(first.stderr)
    listed = runner.invoke(app, ["history", "t", "--db", with_password])
    assert listed.exit_code == 0 and password not in listed.output
    assert f"--db {plain}" in flat(listed.stdout)
    refused = runner.invoke(app, argv)  # no password anywhere: libpq cannot log in
    assert refused.exit_code == 2 and password not in refused.output
    env = {"PGPASSWORD": password}
    if given_by == "PGPASSFILE":
        passfile = tmp_path / "pgpass"
        passfile.write_text(f"*:*:*:{role}:{password}\n")
        passfile.chmod(0o600)
        env = {"PGPASSFILE": str(passfile)}
    elif given_by == "PGSERVICEFILE":
        services = tmp_path / "pg_service.conf"
        services.write_text(f"[wr]\npassword={password}\n")
        env = {"PGSERVICEFILE": str(services), "PGSERVICE": "wr"}
    resumed = runner.invoke(
        app, [*argv, "--json", "--model", write_script(tmp_path, GOOD_RUN)], env=env
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["answer"] == "yes" and password not in resumed.output


@pytest.mark.parametrize(
    ("url", "password", "plain"),
    [
        (
            "postgresql://u:pw1@h/db?sslmode=x&password=pw2#f",
            "pw",
            "postgresql://u@h/db?sslmode=x#f",
        ),
        ("postgresql://u:p@ss@h:5/db", "p@ss", "postgresql://u@h:5/db"),
        ("postgresql://u:p%40ss@h/db", "p@ss", "postgresql://u@h/db"),
        ("postgresql://h/db?password=sec&a=1", "sec", "postgresql://h/db?a=1"),
    ],
)
def test_password_forms_are_left_out_of_hints_and_masked_in_messages(
    url: str, password: str, plain: str
) -> None:
    assert has_password(url) and not has_password(plain)
    assert without_password(url) == plain
    assert password not in redacted(url) and "***" in redacted(url)
    assert password not in hide_password(f'bad token "{url}" near "{password}"', url)
