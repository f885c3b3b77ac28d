"""What both thread stores (SQLite and PostgreSQL) share: their errors and how settings are stored."""

from __future__ import annotations

import json
from typing import Any

from wikireact.context import Context
from wikireact.errors import ConfigurationError, EpisodeStoppedError, first_line

SNAPSHOT_ID_KEY = "_snapshot_id"
"""Stored beside a thread's settings: the id of the snapshot it started on."""


class ThreadStoreError(ConfigurationError):
    """The checkpoint store cannot be used, or a thread is unknown."""


class ThreadBusyError(ThreadStoreError):
    """Another process is running the thread right now."""


class LockLostError(EpisodeStoppedError):
    """The connection holding this process's run locks ended: its episodes stopped unsaved.

    Another process may have taken the threads over; they continue from their last
    checkpoint there, or in a new run of the same command.
    """

    @classmethod
    def explain(cls, location: str, exc: BaseException) -> str:
        """Say in one line that the run locks held on `location` are gone, and why (`exc`)."""
        return (
            f"lost the connection to {location} that holds this process's run locks "
            f"({first_line(exc)})"
        )


def encode_settings(context: Context, snapshot_id: str | None) -> str:
    """Return the registry's JSON of a thread's settings (with its snapshot id, if any)."""
    return json.dumps(context.as_dict() | ({SNAPSHOT_ID_KEY: snapshot_id} if snapshot_id else {}))


def decode_settings(text: str) -> dict[str, Any]:
    """Return the `Context` fields stored by `encode_settings`.

    Threads registered before the tools protocol existed used the text protocol.
    """
    stored = {"protocol": "text", **json.loads(text)}
    stored.pop(SNAPSHOT_ID_KEY, None)
    return stored


def decode_snapshot_id(text: str) -> str | None:
    """Return the snapshot id stored by `encode_settings` (None: not a snapshot)."""
    value = json.loads(text).get(SNAPSHOT_ID_KEY)
    return str(value) if value else None
