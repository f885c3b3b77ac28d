"""What a thread store holds, thread by thread: the rows `wikireact threads list` prints.

One `ThreadInfo` per thread that has a registry row or checkpoints, read with a few
grouped queries per store (`wikireact.storage.sqlite.catalog`,
`wikireact.storage.postgres.catalog`), never by replaying threads: status, steps and time
come from each thread's latest root checkpoint, bytes from its rows' stored sizes.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from wikireact.storage.registry import DEFAULT_AGENT, decode_agent
from wikireact.storage.threads import Threads

NO_STATUS = "-"
"""The status of a thread without checkpoints (registered, never run)."""


@dataclass(frozen=True)
class ThreadInfo:
    """One thread of a store, as `threads list` shows it."""

    thread_id: str
    agent: str
    task: str
    question: str
    status: str
    steps: int
    updated: float
    """When its latest checkpoint was saved (or, without one, it was registered): Unix time."""
    checkpoints: int
    bytes: int
    """Bytes its checkpoints, writes and stored values take (as stored, before indexes)."""

    def as_json(self) -> dict[str, Any]:
        """Return the row as `threads list --json` prints it."""
        return asdict(self)


@dataclass(frozen=True)
class StoreStats:
    """A store's totals, as `threads stats` shows them."""

    threads: int
    checkpoints: int
    tables: dict[str, int]
    """Bytes on disk per table (indexes included)."""
    total_bytes: int
    """The file (with its write-ahead log) or the database."""


@dataclass(frozen=True)
class Latest:
    """What a thread's latest root checkpoint says."""

    status: str
    steps: int
    updated: float


@dataclass
class Sizes:
    """A thread's checkpoint count and stored bytes, summed over tables."""

    checkpoints: int = 0
    bytes: int = 0


def timestamp(ts: str | None) -> float:
    """Return a checkpoint's ISO `ts` as Unix time (0 when missing or unreadable)."""
    try:
        return datetime.fromisoformat(str(ts)).timestamp()
    except ValueError:
        return 0.0


def build_infos(
    registry: dict[str, tuple[str, str, float]],
    sizes: dict[str, Sizes],
    latest: dict[str, Latest],
) -> list[ThreadInfo]:
    """Join registry rows (question, settings, created), sizes and latest checkpoints, by id."""
    out = []
    for thread_id in sorted(registry.keys() | sizes.keys()):
        question, settings, created = registry.get(thread_id, ("", "{}", 0.0))
        fields = json.loads(settings)
        head = latest.get(thread_id, Latest(NO_STATUS, 0, created))
        size = sizes.get(thread_id, Sizes())
        out.append(
            ThreadInfo(
                thread_id=thread_id,
                agent=decode_agent(settings) if thread_id in registry else DEFAULT_AGENT,
                task=str(fields.get("task") or "hotpotqa"),
                question=question,
                status=head.status,
                steps=head.steps,
                updated=head.updated,
                checkpoints=size.checkpoints,
                bytes=size.bytes,
            )
        )
    return out


def list_threads(store: Threads) -> list[ThreadInfo]:
    """Return every thread of `store` (SQLite or PostgreSQL), by thread id."""
    return _backend(store).list_threads(store)


def store_stats(store: Threads) -> StoreStats:
    """Return `store`'s thread and checkpoint counts and its bytes by table."""
    return _backend(store).store_stats(store)


def vacuum(store: Threads, *, full: bool = False) -> None:
    """Give freed space back (SQLite: VACUUM; PostgreSQL: VACUUM, or VACUUM FULL if `full`)."""
    _backend(store).vacuum(store, full=full)


def unregister(store: Threads, thread_id: str) -> None:
    """Delete a thread's registry row."""
    _backend(store).unregister(store, thread_id)


def _backend(store: Threads) -> Any:
    from wikireact.storage.sqlite.threads import SqliteThreads

    if isinstance(store, SqliteThreads):
        from wikireact.storage.sqlite import catalog as sqlite_catalog

        return sqlite_catalog
    from wikireact.storage.postgres import catalog as postgres_catalog

    return postgres_catalog


def store_bytes(store: Threads) -> int:
    """Return the store's size on disk (the SQLite file with its log, or the database)."""
    return int(_backend(store).store_bytes(store))
