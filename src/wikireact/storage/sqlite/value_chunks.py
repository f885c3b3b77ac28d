"""Large delta-channel snapshots stored as chunks that checkpoints share.

A `DeltaChannel` stores its whole value in a checkpoint every `FULL_VALUE_EVERY` writes
(`wikireact.state`), so that reading it replays a bounded number of writes. For a value
that grows with the episode (the trajectory, the audit trail) that cost the square of the
episode's length in bytes: the 16th snapshot of a 4,800-step episode stored 4,800 steps
again. `CompactSqliteSaver` therefore stores a large list or dict snapshot as the digests
of its `CHUNK_ITEMS`-item pieces, each piece once per thread (content-addressed, so a piece
that did not change since the last snapshot is not stored again, whatever wrote it);
only the new pieces cost bytes. Reading reassembles the exact value.

`ChunkWriter` remembers which pieces of a channel's value it stored last time and
compares them with the new value's pieces, so a snapshot
serializes only its new pieces: time per snapshot stays flat too. Pieces are compared by
identity, not equality (`1 == True`, yet they serialize differently).
"""

from __future__ import annotations

import hashlib
import operator
import struct
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

CHUNK_ITEMS = 32
"""Items (list items, or dict entries) per stored piece; smaller values are stored whole."""
DIGEST_BYTES = 16
REMEMBERED_VALUES = 256
"""(thread, namespace, channel) values whose stored pieces a `ChunkWriter` remembers (an
evaluation runs many threads at once; a value it forgot is serialized whole once more)."""
_HEAD = struct.Struct("<HBI")  # channel name length, kind, number of pieces
_KINDS = {list: 0, dict: 1}

Key = tuple[str, str, str]
"""(thread id, checkpoint namespace, channel)."""
Piece = tuple[bytes, str, bytes]
"""A stored piece: digest, serialized type tag, serialized value."""
ChunkRefs = Mapping[str, tuple[int, list[bytes]]]
"""Per chunked channel: its kind (0 list, 1 dict) and the digests of its pieces, in order."""


def chunkable(value: Any) -> bool:
    """Whether a snapshot value is stored in pieces (a plain list or dict of many items)."""
    return type(value) in _KINDS and len(value) > CHUNK_ITEMS


def _pieces(value: list[Any] | dict[Any, Any]) -> list[Any]:
    if isinstance(value, list):
        return [value[at : at + CHUNK_ITEMS] for at in range(0, len(value), CHUNK_ITEMS)]
    items = iter(value.items())
    return [dict(islice(items, CHUNK_ITEMS)) for _ in range(0, len(value), CHUNK_ITEMS)]


def _same(old: Any, new: Any) -> bool:
    """Whether two pieces hold the very same objects (so `old`'s stored form is `new`'s)."""
    if len(old) != len(new):
        return False
    if isinstance(old, dict):
        return all(map(operator.is_, old, new)) and all(
            map(operator.is_, old.values(), new.values())
        )
    return all(map(operator.is_, old, new))


def assemble(kind: int, pieces: list[Any]) -> list[Any] | dict[Any, Any]:
    """Return the value whose pieces (deserialized, in order) these are."""
    if kind == _KINDS[list]:
        return [item for piece in pieces for item in piece]
    out: dict[Any, Any] = {}
    for piece in pieces:
        out.update(piece)
    return out


def encode_refs(refs: ChunkRefs) -> bytes:
    """Serialize the per-channel digests stored in a checkpoint row."""
    parts = []
    for channel, (kind, digests) in refs.items():
        name = channel.encode()
        parts.append(_HEAD.pack(len(name), kind, len(digests)) + name + b"".join(digests))
    return b"".join(parts)


def decode_refs(data: bytes) -> dict[str, tuple[int, list[bytes]]]:
    """Undo `encode_refs`."""
    out, at = {}, 0
    while at < len(data):
        name_len, kind, count = _HEAD.unpack_from(data, at)
        at += _HEAD.size
        channel = data[at : at + name_len].decode()
        at += name_len
        digests = [data[at + i * DIGEST_BYTES : at + (i + 1) * DIGEST_BYTES] for i in range(count)]
        at += count * DIGEST_BYTES
        out[channel] = (kind, digests)
    return out


@dataclass(frozen=True)
class Chunked:
    """A value split for storage: its kind, its pieces' digests, and the pieces not yet stored."""

    kind: int
    digests: list[bytes]
    new: list[Piece]
    remembered: list[tuple[Any, bytes]]
    """(piece, digest) of every piece, for `ChunkWriter.stored`."""


class ChunkWriter:
    """Splits snapshot values into pieces, serializing only pieces it has not stored before."""

    def __init__(self, serde: SerializerProtocol) -> None:
        """Serialize pieces with `serde` (the saver's)."""
        self.serde = serde
        self._lock = threading.Lock()
        self._stored: OrderedDict[Key, list[tuple[Any, bytes]]] = OrderedDict()

    def split(self, key: Key, value: list[Any] | dict[Any, Any]) -> Chunked:
        """Split `value`, the snapshot of `key`'s channel, into pieces."""
        with self._lock:
            before = self._stored.get(key, [])
        digests, new, remembered = [], [], []
        for index, piece in enumerate(_pieces(value)):
            if index < len(before) and _same(before[index][0], piece):
                digest = before[index][1]
            else:
                type_, data = self.serde.dumps_typed(piece)
                digest = hashlib.blake2b(
                    type_.encode() + b"\0" + data, digest_size=DIGEST_BYTES
                ).digest()
                new.append((digest, type_, data))
            digests.append(digest)
            remembered.append((piece, digest))
        return Chunked(_KINDS[type(value)], digests, new, remembered)

    def stored(self, key: Key, chunked: Chunked) -> None:
        """Remember that `chunked`'s pieces are stored (call once they are committed)."""
        with self._lock:
            self._stored[key] = chunked.remembered
            self._stored.move_to_end(key)
            while len(self._stored) > REMEMBERED_VALUES:
                self._stored.popitem(last=False)

    def forget(self, thread_id: str) -> None:
        """Forget the pieces of a thread's values (its rows were deleted)."""
        with self._lock:
            for key in [k for k in self._stored if k[0] == thread_id]:
                del self._stored[key]
