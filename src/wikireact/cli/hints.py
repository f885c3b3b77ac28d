"""The exact `wikireact resume ...` command a user can copy to continue a thread.

A PostgreSQL `--db` URL is printed without its password (`wikireact.storage.postgres.url`): the hint
then says where libpq takes it from (PGPASSWORD, ~/.pgpass or a service file).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from wikireact.storage.postgres.url import PASSWORD_SOURCES, has_password, without_password
from wikireact.storage.threads import default_db_path


def resume_command(
    thread_id: str,
    db: str | Path | None = None,
    max_steps: int | None = None,
    checkpoint: str | None = None,
) -> str:
    """Return a shell command that resumes `thread_id`, quoted so it works as typed.

    `--db` is included when the checkpoint file is not the default one (as an absolute
    path, so the command works from any directory; a PostgreSQL URL without its
    password); `--max-steps` when the run used a budget other than the one the thread was
    started with; `--from` to name a checkpoint.
    """
    options: list[str] = []
    if db is not None and str(db) != str(default_db_path()):
        location = (
            without_password(str(db)) if "://" in str(db) else str(Path(db).expanduser().resolve())
        )
        options += ["--db", location]
    if max_steps is not None:
        options += ["--max-steps", str(max_steps)]
    if checkpoint is not None:
        options += ["--from", checkpoint]
    if thread_id.startswith("-"):  # would read as an option: put it after `--`
        return shlex.join(["wikireact", "resume", *options, "--", thread_id])
    return shlex.join(["wikireact", "resume", thread_id, *options])


def resume_hint(
    thread_id: str,
    db: str | Path | None = None,
    max_steps: int | None = None,
    checkpoint: str | None = None,
) -> str:
    """Return `resume_command` in backticks, then where to give the password it leaves out."""
    command = f"`{resume_command(thread_id, db, max_steps, checkpoint)}`"
    if db is not None and "://" in str(db) and has_password(str(db)):
        return f"{command} (the password is not shown: {PASSWORD_SOURCES})"
    return command
