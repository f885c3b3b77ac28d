"""A thread of a store and a store's totals, as `wikireact threads` shows them.

The rows `wikireact.storage.catalog` returns, built by each store's backend
(`wikireact.storage.sqlite.catalog`, `wikireact.storage.postgres.catalog`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from wikireact.storage.registry import DEFAULT_AGENT, decode_agent

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
