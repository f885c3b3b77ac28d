"""Checkpoint rows' `packed` payloads compressed against their parent's (packed layout 2).

Consecutive checkpoints of a thread differ in a few versions and values, yet each row held
every one of them again: ~280 B of `packed` and ~350 B of `checkpoint` jsonb per row, four
rows per step. Layout 2 (`wikireact.storage.postgres.layout`) keeps in the jsonb only what
SQL reads (time, status, steps, snapshot marks) and puts the rest in the payload, which
is stored as zlib against the parent's payload (`DELTA` + the stream of
`wikireact.storage.sqlite.parent_deltas.compress_against`), at most `CHAIN - 1` in a row;
the next is stored alone (a keyframe, squeezed JSON as in layout 1), so reading one row
decompresses at most `CHAIN` payloads.

A payload never changes once written (marking a checkpoint's full values, as a prune does,
changes only its jsonb): a delta written against the payload its writer stored for the
parent stays readable, whether that parent row is later stored as a keyframe or not.
Before a row goes (prune, `delete_for_runs`) or is overwritten, its delta children are
rewritten as keyframes (`keyframe_children`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from wikireact.errors import ThreadsError
from wikireact.storage.sqlite.codec import squeeze, unsqueeze
from wikireact.storage.sqlite.parent_deltas import (
    CHAIN,
    LastStored,
    compress_against,
    decompress_against,
)

DELTA = b"\x01"
"""First byte of a payload stored against its parent's (JSON starts with `{`, zlib with 0x78)."""
_WINDOW_SQL = (
    "SELECT checkpoint_id, parent_checkpoint_id, packed FROM checkpoints "
    "WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id <= %s "
    "ORDER BY checkpoint_id DESC LIMIT %s"
)
_CHILDREN_SQL = (
    "SELECT checkpoint_id, parent_checkpoint_id, packed FROM checkpoints "
    "WHERE thread_id = %s AND checkpoint_ns = %s AND parent_checkpoint_id = ANY(%s) "
    "AND NOT checkpoint_id = ANY(%s) AND substring(packed FROM 1 FOR 1) = %s"
)

Row = tuple[str | None, bytes | None]
"""A checkpoint row as the resolver needs it: parent id, stored `packed` (None: stock row)."""


def dump_payload(payload: Mapping[str, Any]) -> bytes:
    """Return a payload as compact ASCII JSON (exact for every string, lone surrogates too)."""
    return json.dumps(payload, separators=(",", ":")).encode()


def keyframe(payload: bytes) -> bytes:
    """Return the stored form of a payload kept alone (squeezed when that helps)."""
    return squeeze(payload) or payload


class Payloads:
    """Resolves the payloads of one thread namespace's rows, fetching ancestors as needed."""

    def __init__(self, cur: Any, thread_id: str, ns: str) -> None:
        """Read missing ancestors through `cur`."""
        self.cur, self.thread_id, self.ns = cur, thread_id, ns
        self.rows: dict[str, Row] = {}
        self._known: dict[str, bytes | None] = {}

    def add(self, rows: Mapping[str, Row]) -> None:
        """Make these rows known (id -> parent id, stored `packed`)."""
        self.rows.update(rows)

    def _fetch(self, checkpoint_id: str) -> None:
        self.cur.execute(_WINDOW_SQL, (self.thread_id, self.ns, checkpoint_id, CHAIN))
        self.rows.update(
            (r["checkpoint_id"], (r["parent_checkpoint_id"], r["packed"]))
            for r in self.cur.fetchall()
        )

    def raw(self, checkpoint_id: str) -> bytes | None:
        """Return a row's payload as JSON bytes (None for a stock row, which has none)."""
        chain: list[str] = []
        at: str | None = checkpoint_id
        while True:
            if at is None:
                raise ThreadsError(
                    f"thread {self.thread_id!r}: checkpoint {chain[-1]} is stored against "
                    "a parent it does not have"
                )
            if at in self._known:
                base = self._known[at]
                break
            if at not in self.rows:
                self._fetch(at)
            if at not in self.rows:
                raise ThreadsError(
                    f"thread {self.thread_id!r}: checkpoint {chain[-1] if chain else at} is "
                    f"stored against its parent {at}, which is missing"
                )
            parent, packed = self.rows[at]
            if packed is not None and packed[:1] == DELTA:
                chain.append(at)
                at = parent
                continue
            base = None if packed is None else (packed if packed[:1] == b"{" else unsqueeze(packed))
            self._known[at] = base
            break
        for child in reversed(chain):
            if base is None:
                raise ThreadsError(
                    f"thread {self.thread_id!r}: checkpoint {child} is stored against a "
                    "parent without a packed payload"
                )
            stored = self.rows[child][1]
            assert stored is not None
            base = decompress_against(stored[1:], base)
            self._known[child] = base
        return base

    def payload(self, checkpoint_id: str) -> dict[str, Any] | None:
        """Return a row's decoded payload (None for a stock row)."""
        raw = self.raw(checkpoint_id)
        return None if raw is None else json.loads(raw)


def keyframe_children(
    cur: Any, thread_id: str, ns: str, parents: Collection[str], skip: Collection[str] = ()
) -> None:
    """Rewrite as keyframes the delta rows whose parent is in `parents` (not those in `skip`).

    Call it before the parents go or change, in the same transaction.
    """
    if not parents:
        return
    cur.execute(_CHILDREN_SQL, (thread_id, ns, sorted(parents), sorted(skip), DELTA))
    children = {
        r["checkpoint_id"]: (r["parent_checkpoint_id"], r["packed"]) for r in cur.fetchall()
    }
    if not children:
        return
    payloads = Payloads(cur, thread_id, ns)
    payloads.add(children)
    frames = [(payloads.raw(cid), cid) for cid in sorted(children)]
    cur.executemany(
        "UPDATE checkpoints SET packed = %s WHERE thread_id = %s AND checkpoint_ns = %s "
        "AND checkpoint_id = %s",
        [(keyframe(raw or b"{}"), thread_id, ns, cid) for raw, cid in frames],
    )


@dataclass(frozen=True)
class Stored:
    """The last checkpoint a writer stored for a (thread, namespace)."""

    checkpoint_id: str
    payload: bytes
    depth: int
    """Deltas since its keyframe (0: it is one)."""


class DeltaWriter(LastStored[Stored]):
    """Encodes payloads against the parent's this writer stored last (see the module)."""

    def encode(
        self, thread_id: str, ns: str, checkpoint_id: str, parent_id: str | None, payload: bytes
    ) -> tuple[bytes, Stored]:
        """Return the stored `packed` of this payload (a delta or a keyframe), and what to remember."""
        last = self.last(thread_id, ns)
        if last is not None and last.checkpoint_id == parent_id and last.depth + 1 < CHAIN:
            delta = DELTA + compress_against(payload, last.payload)
            return delta, Stored(checkpoint_id, payload, last.depth + 1)
        return keyframe(payload), Stored(checkpoint_id, payload, 0)
