"""Checkpoint blobs compressed against their parent checkpoint's.

Consecutive checkpoints of a thread differ in a few channel values and versions, yet each
held every one of them again: compressed alone a checkpoint of the 97-step reading episode
(bench/checkpoint_growth.py) cost ~630 B, a third of the file; compressed against its
parent's bytes ~130 B. `CompactSqliteSaver` therefore stores a checkpoint as zlib against a
preset dictionary of `ZDICT_2` and its parent's serialized checkpoint (type tag suffix `ZP1`),
at most `CHAIN - 1` in a row; the next is stored alone (`ZD1`, a keyframe), so reading one
decompresses at most `CHAIN` blobs.

A delta is written only against the parent this writer stored last, and only while that
row still holds exactly the bytes it stored (a parent rewritten since, e.g. materialised by a
prune in another process, gets a keyframe child). Before a row is rewritten or deleted, its
delta children are rewritten as keyframes (`keyframe_children`), so no row ever needs a
parent that changed or went.
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from wikireact.errors import ThreadsError
from wikireact.storage.sqlite.codec import (
    DICTIONARIES,
    ZD1,
    ZDICT_2,
    dictionary_of,
    squeeze,
    unsqueeze,
)

ZP1 = "+zp1"
"""Type-tag suffix of a checkpoint blob compressed against `ZDICT_2` + its parent's payload."""
CHAIN = 16
"""At most this many blobs are decompressed to read one checkpoint (a keyframe, then deltas)."""
REMEMBERED_THREADS = 256
"""(thread, namespace) pairs whose last stored checkpoint a `DeltaWriter` remembers."""
_WINDOW = 32768

Row = tuple[str, str | None, str, bytes]
T = TypeVar("T")
"""A checkpoint row as stored: id, parent id, type tag, blob."""
Payload = tuple[str, bytes]
"""A checkpoint as its serializer gave it: type tag, bytes."""


def _dictionary(names: bytes, base: bytes) -> bytes:
    return (names + base)[-_WINDOW:]


def compress_against(payload: bytes, base: bytes) -> bytes:
    """Compress `payload` with `ZDICT_2` and `base` (the parent's payload) as dictionary."""
    packer = zlib.compressobj(1, zdict=_dictionary(ZDICT_2, base))
    return packer.compress(payload) + packer.flush()


def decompress_against(data: bytes, base: bytes) -> bytes:
    """Undo `compress_against` (against either of the codec's `DICTIONARIES`)."""
    zdict = dictionary_of(data, (_dictionary(names, base) for names in reversed(DICTIONARIES)))
    unpacker = zlib.decompressobj(zdict=zdict)
    return unpacker.decompress(data) + unpacker.flush()


def keyframe(type_: str, payload: bytes) -> tuple[str, bytes]:
    """Return the stored (type, blob) of a checkpoint stored alone (squeezed when that helps)."""
    squeezed = squeeze(payload)
    return (type_, payload) if squeezed is None else (type_ + ZD1, squeezed)


def _fetch(cur: Any, thread_id: str, ns: str, checkpoint_id: str) -> Row | None:
    return cur.execute(
        "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints "
        "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
        (thread_id, ns, checkpoint_id),
    ).fetchone()


def resolve(cur: Any, thread_id: str, ns: str, rows: Sequence[Row]) -> dict[str, Payload]:
    """Return each row's payload by checkpoint id, reading ancestors' rows where needed."""
    known: dict[str, Payload] = {}
    for row in sorted(rows, key=lambda r: r[0]):  # ids grow with time: parents first
        pending: list[Row] = []
        found: Row | None = row
        while found is not None and found[2].endswith(ZP1) and found[1] not in known:
            pending.append(found)
            found = _fetch(cur, thread_id, ns, found[1]) if found[1] else None
        if found is None:
            raise ThreadsError(
                f"thread {thread_id}: checkpoint {pending[-1][0]} is stored against its "
                f"parent {pending[-1][1]}, which is missing"
            )
        if found[2].endswith(ZP1):
            base = known[str(found[1])][1]
            pending.append(found)
        else:
            type_, blob = found[2], found[3]
            base = unsqueeze(blob) if type_.endswith(ZD1) else blob
            known[found[0]] = (type_.removesuffix(ZD1), base)
        for delta in reversed(pending):
            base = decompress_against(delta[3], base)
            known[delta[0]] = (delta[2].removesuffix(ZP1), base)
    return {row[0]: known[row[0]] for row in rows}


def keyframe_children(
    cur: Any, thread_id: str, ns: str, parents: Collection[str], skip: Collection[str] = ()
) -> None:
    """Rewrite as keyframes the delta rows whose parent is in `parents` (not those in `skip`)."""
    if not parents:
        return
    ids = [
        checkpoint_id
        for checkpoint_id, parent_id in cur.execute(
            "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND type LIKE ?",
            (thread_id, ns, "%" + ZP1),
        ).fetchall()
        if parent_id in parents and checkpoint_id not in skip
    ]
    children = [row for cid in ids if (row := _fetch(cur, thread_id, ns, cid)) is not None]
    for checkpoint_id, (type_, payload) in resolve(cur, thread_id, ns, children).items():
        cur.execute(
            "UPDATE checkpoints SET type = ?, checkpoint = ? WHERE thread_id = ? "
            "AND checkpoint_ns = ? AND checkpoint_id = ?",
            (*keyframe(type_, payload), thread_id, ns, checkpoint_id),
        )


@dataclass(frozen=True)
class Stored:
    """The last checkpoint a writer stored for a (thread, namespace)."""

    checkpoint_id: str
    row: tuple[str, bytes]
    """Its stored type and blob (a delta is written against it only while its row holds these)."""
    payload: bytes
    depth: int
    """Deltas since its keyframe (0: it is one)."""


class LastStored(Generic[T]):
    """What a writer stored last for each (thread, namespace): the most recent `REMEMBERED_THREADS`.

    Thread-safe; a saver's delta writer keeps its checkpoints here to encode the next one
    against (this module's and `wikireact.storage.postgres.deltas`).
    """

    def __init__(self) -> None:
        """Remember nothing yet."""
        self._lock = threading.Lock()
        self._last: OrderedDict[tuple[str, str], T] = OrderedDict()

    def last(self, thread_id: str, ns: str) -> T | None:
        """Return what was stored last for the thread's namespace (None: nothing remembered)."""
        with self._lock:
            return self._last.get((thread_id, ns))

    def stored(self, thread_id: str, ns: str, stored: T) -> None:
        """Remember `stored` as the thread's last checkpoint (call once it is committed)."""
        with self._lock:
            self._last[(thread_id, ns)] = stored
            self._last.move_to_end((thread_id, ns))
            while len(self._last) > REMEMBERED_THREADS:
                self._last.popitem(last=False)

    def forget(self, thread_ids: Collection[str]) -> None:
        """Forget the last checkpoints of these threads (their rows changed)."""
        with self._lock:
            for key in [k for k in self._last if k[0] in thread_ids]:
                del self._last[key]


class DeltaWriter(LastStored[Stored]):
    """Encodes checkpoints against the parent it stored last (see the module's docstring)."""

    def encode(
        self,
        cur: Any,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        parent_id: str | None,
        payload: Payload,
    ) -> Stored:
        """Return how to store this checkpoint: a delta against its parent, or a keyframe."""
        last = self.last(thread_id, ns)
        type_, data = payload
        if last is not None and last.checkpoint_id == parent_id and last.depth + 1 < CHAIN:
            parent = _fetch(cur, thread_id, ns, parent_id)
            if parent is not None and (parent[2], parent[3]) == last.row:
                delta = compress_against(data, last.payload)
                return Stored(checkpoint_id, (type_ + ZP1, delta), data, last.depth + 1)
        return Stored(checkpoint_id, keyframe(type_, data), data, 0)


def with_payloads(cur: Any, rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Return checkpoint rows with their delta blobs resolved to payloads.

    Each row starts with thread id, namespace, checkpoint id, parent id, type, blob (the
    saver's `_COLUMNS`); the type and blob of a `ZP1` row become its payload's.
    """
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if str(row[4]).endswith(ZP1):
            groups.setdefault((row[0], row[1]), []).append((row[2], row[3], row[4], row[5]))
    payloads: Mapping[tuple[str, str, str], Payload] = {
        (thread_id, ns, cid): payload
        for (thread_id, ns), found in groups.items()
        for cid, payload in resolve(cur, thread_id, ns, found).items()
    }
    out = []
    for row in rows:
        new = list(row)
        if (payload := payloads.get((row[0], row[1], row[2]))) is not None:
            new[4], new[5] = payload
        out.append(new)
    return out
