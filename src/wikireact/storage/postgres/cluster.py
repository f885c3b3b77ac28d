"""A throwaway PostgreSQL cluster for tests and benchmarks (never for production data).

`PgCluster.start()` runs `initdb` in a temporary directory and starts a server on a free
localhost port with trust authentication; `stop()` stops it and deletes everything. The
server refuses to run as root, so under root (CI) every command runs as the `postgres`
OS user (`runuser`). Binaries are found in `WIKIREACT_PG_BIN`, on PATH, or under
`/usr/lib/postgresql/*/bin`.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from wikireact.errors import PgUnavailableError


def find_bindir() -> Path | None:
    """Return the directory holding `initdb` and `pg_ctl`, or None."""
    candidates = [os.environ.get("WIKIREACT_PG_BIN", "")]
    on_path = shutil.which("initdb")
    candidates.append(str(Path(on_path).parent) if on_path else "")
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for candidate in candidates:
        if (
            candidate
            and (Path(candidate) / "initdb").exists()
            and (Path(candidate) / "pg_ctl").exists()
        ):
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PgCluster:
    """A running throwaway cluster; `url(db)` gives a DSN for one of its databases."""

    bindir: Path
    root: Path
    port: int
    as_postgres: bool
    databases: list[str] = field(default_factory=list)

    @classmethod
    def start(cls) -> PgCluster:
        """Create and start a cluster; raise `PgUnavailableError` with the reason if impossible."""
        bindir = find_bindir()
        if bindir is None:
            raise PgUnavailableError(
                "PostgreSQL server binaries (initdb, pg_ctl) not found; install PostgreSQL "
                "or set WIKIREACT_PG_BIN"
            )
        as_postgres = os.geteuid() == 0
        root = Path(tempfile.mkdtemp(prefix="wikireact-pg-"))
        cluster = cls(bindir=bindir, root=root, port=_free_port(), as_postgres=as_postgres)
        try:
            if as_postgres:
                shutil.chown(root, "postgres", "postgres")
            root.chmod(0o700)
            cluster._run(
                "initdb",
                "-D",
                str(root / "data"),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            )
            options = f"-c listen_addresses=127.0.0.1 -p {cluster.port} -k {root} -c fsync=off"
            cluster._run(
                "pg_ctl",
                "-D",
                str(root / "data"),
                "-l",
                str(root / "log"),
                "-w",
                "-o",
                options,
                "start",
            )
        except (OSError, subprocess.CalledProcessError, LookupError) as exc:
            detail = getattr(exc, "stderr", "") or ""
            cluster._remove()
            raise PgUnavailableError(
                f"cannot start a PostgreSQL cluster: {exc} {detail}".strip()
            ) from None
        return cluster

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(
            command, check=True, capture_output=True, text=True, timeout=120, cwd=self.root
        )

    def url(self, database: str = "postgres") -> str:
        """Return the DSN of `database` on this cluster."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """Create a fresh, uniquely named database and return its DSN."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.databases.append(name)
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop a database made by `create_database`, disconnecting its sessions."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def add_password_role(self, role: str, password: str) -> None:
        """Create a superuser `role` that must log in over TCP with `password` (SCRAM).

        Every other role keeps trust authentication. For tests of how a password is given
        (PGPASSWORD, a password file, a service file) and never printed.
        """
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
            hba = self.root / "data" / "pg_hba.conf"
            rule = f"host all {role} 127.0.0.1/32 scram-sha-256\n"
            hba.write_text(rule + hba.read_text())  # the first matching line decides
            conn.execute("SELECT pg_reload_conf()")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the server rereads the file a moment later
            try:
                psycopg.connect(self.url().replace("postgres@", f"{role}@", 1)).close()
            except psycopg.OperationalError:
                return  # a password is asked for now
            time.sleep(0.05)
        raise PgUnavailableError(f"the server did not start asking {role} for a password")

    def stop(self) -> None:
        """Stop the server and delete its files."""
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        except (OSError, subprocess.CalledProcessError):
            pass
        self._remove()

    def _remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
