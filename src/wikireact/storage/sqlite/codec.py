"""How wikireact's checkpointer encodes what it stores: small, and readable back exactly.

- `squeeze`: zlib against `ZDICT_2`, a preset dictionary of the names every checkpoint and
  write repeats (channels, nodes, fields, metadata), so even a 300-byte blob compresses ~2.5x
  (streams compressed against the first one, `ZDICT`, still read).
- `pack_writes`: all writes of one task in one blob (one row instead of one per channel).
- `dump_metadata` / `load_metadata`: checkpoint metadata as squeezed compact JSON
  (plain JSON, as the stock saver wrote it, still loads).
- `CompressingSerializer`: the strict value serializer (`wikireact.storage.serde`) with zlib
  on large values; `plain_payload` serializes without it (for blobs compressed otherwise).
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, cast

from langgraph.checkpoint.base import CheckpointMetadata

from wikireact.storage.serde import StrictSerializer

COMPRESS_OVER = 1024
"""Values larger than this are zlib-compressed by `CompressingSerializer` (page text ~4x)."""
SQUEEZE_OVER = 48
"""Blobs larger than this are compressed against `ZDICT` when that makes them smaller."""
ZD1 = "+zd1"
"""Type-tag suffix of a checkpoint blob squeezed against `ZDICT`."""

_NAMES = (
    "msgpack null bytes json ~__pregel_pull, ~__pregel_push, __pregel_tasks __interrupt__ "
    "__error__ __resume__ __scheduled__ __start__ __input__ __end__ branch:to: "
    "wiki_requests input_tokens output_tokens format_error action_text state_key repeat_of "
    "executed invalid repeat finish rejected raw kind thought action observation name argument "
    "Search Lookup Finish Thought: Action: (Result  / No more results. "
    "question answer status steps page_title page_sentences lookup_cursors page_key proposals "
    "current trajectory usage running finished budget_exhausted repetition_halted "
    "reason parse act observe v ts id channel_values channel_versions versions_seen "
    "updated_channels branch:to:reason branch:to:parse branch:to:act branch:to:observe "
    "protocol text tools calls args started_at ended_at approval decision approved edited by "
    "original_action note verb arguments title keyword attempted audit"
).split(" ")
_NAMES_2 = (
    "shown sentence_index sentence cleared model_seconds wiki_seconds citations supported "
    "stop_reason model_calls pages_read context lessons context_exhausted recursion_limit "
    "unverified plan model wiki live max_steps repetition_limit observation_cap context_tokens "
    "keep_observations max_model_calls max_input_tokens max_output_tokens approve "
    "verify_finish method react task hotpotqa"
).split(" ")
_METADATA_2 = (
    '{"source":"input","step":-1,"parents":{},"run_id":"'
    '{"source":"loop","step":1,"parents":{},"counters_since_delta_snapshot":{'
    '"trajectory":[1,1],"usage":[1,1],"audit":[1,1],"page_sentences":[1,1],"proposals":[1,1],'
    '"current":[1,1],"pages_read":[1,1]}}'
)


def _msgpack_names(names: list[str]) -> bytes:
    return b"".join(bytes([0xA0 | min(len(n), 31)]) + n.encode()[:31] for n in names)


ZDICT = _msgpack_names(_NAMES)
"""zlib preset dictionary: msgpack-encoded names. FROZEN: stored blobs depend on its bytes
(a stream names its dictionary by checksum: `dictionary_of`)."""
ZDICT_2 = ZDICT + _msgpack_names(_NAMES_2) + _METADATA_2.encode()
"""The dictionary `squeeze` uses: `ZDICT`, the names added since (evidence, context fitting,
the stored context) and the checkpoint metadata's JSON. FROZEN as `ZDICT` is."""
DICTIONARIES = (ZDICT, ZDICT_2)
"""Every preset dictionary a stored stream may have been compressed with, oldest first."""
_RAW_WRITES, _ZD1_WRITES = b"\x00", b"\x01"
_WRITE_HEAD = struct.Struct("<iHHI")

Write = tuple[int, str, str, bytes]
"""A stored write: index in its task, channel, serialized type tag, serialized value."""


def dictionary_of(stream: bytes, candidates: Iterable[bytes]) -> bytes:
    """Return the candidate preset dictionary a zlib stream was compressed with.

    A zlib stream with a preset dictionary names it in its header (its Adler-32 checksum);
    a stream without one, or naming none of them, gets the first candidate.
    """
    options = list(candidates)
    if len(stream) >= 6 and stream[1] & 0x20:
        wanted = int.from_bytes(stream[2:6], "big")
        for option in options:
            if zlib.adler32(option) == wanted:
                return option
    return options[0]


def squeeze(data: bytes) -> bytes | None:
    """Compress `data` against `ZDICT_2`; None when that does not make it smaller."""
    if len(data) <= SQUEEZE_OVER:
        return None
    packer = zlib.compressobj(1, zdict=ZDICT_2)
    packed = packer.compress(data) + packer.flush()
    return packed if len(packed) < len(data) else None


def unsqueeze(data: bytes) -> bytes:
    """Undo `squeeze` (of this version, `ZDICT_2`, or of an earlier one, `ZDICT`)."""
    unpacker = zlib.decompressobj(zdict=dictionary_of(data, DICTIONARIES))
    return unpacker.decompress(data) + unpacker.flush()


def pack_writes(writes: Iterable[Write]) -> bytes:
    """Serialize one task's writes into one blob (squeezed when that helps)."""
    parts = []
    for idx, channel, type_, value in writes:
        name, kind = channel.encode(), type_.encode()
        parts.append(_WRITE_HEAD.pack(idx, len(name), len(kind), len(value)) + name + kind + value)
    raw = b"".join(parts)
    squeezed = squeeze(raw)
    return _RAW_WRITES + raw if squeezed is None else _ZD1_WRITES + squeezed


def unpack_writes(blob: bytes) -> list[Write]:
    """Return the writes packed by `pack_writes`, in stored order."""
    raw = unsqueeze(blob[1:]) if blob[:1] == _ZD1_WRITES else blob[1:]
    out, at, head = [], 0, _WRITE_HEAD.size
    while at < len(raw):
        idx, name_len, kind_len, value_len = _WRITE_HEAD.unpack_from(raw, at)
        at += head
        channel = raw[at : at + name_len].decode()
        at += name_len
        type_ = raw[at : at + kind_len].decode()
        at += kind_len
        out.append((idx, channel, type_, raw[at : at + value_len]))
        at += value_len
    return out


def dump_metadata(metadata: Mapping[str, Any]) -> bytes:
    """Return checkpoint metadata as compact JSON, squeezed when that helps."""
    text = json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "ignore")
    return squeeze(text) or text


def load_metadata(stored: bytes | str | None) -> CheckpointMetadata:
    """Return a checkpoint's metadata: plain JSON (stock rows) or squeezed JSON."""
    if stored is None:
        return cast(CheckpointMetadata, {})
    if isinstance(stored, bytes) and stored[:1] != b"{":  # a zlib stream starts with 0x78
        stored = unsqueeze(stored)
    return cast(CheckpointMetadata, json.loads(stored))


def metadata_matches(metadata: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether every `key: value` of `wanted` is in `metadata` (dotted keys reach nested values)."""
    for key, value in wanted.items():
        found: Any = metadata
        for part in key.split("."):
            found = found.get(part) if isinstance(found, Mapping) else None
        if found != value:
            return False
    return True


class CompressingSerializer(StrictSerializer):
    """wikireact's strict serializer (`StrictSerializer`), with zlib on values over 1 KiB (page text ~4x)."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize, compressing large payloads and tagging their type."""
        kind, data = super().dumps_typed(obj)
        if len(data) > COMPRESS_OVER:
            return f"{kind}+zlib", zlib.compress(data, 1)
        return kind, data

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize, decompressing tagged payloads."""
        kind, payload = data
        if kind.endswith("+zlib"):
            return super().loads_typed((kind.removesuffix("+zlib"), zlib.decompress(payload)))
        return super().loads_typed(data)


def plain_payload(serde: Any, obj: Any) -> tuple[str, bytes]:
    """Serialize `obj` with `serde`, but without `CompressingSerializer`'s zlib.

    For a blob the caller compresses itself: zlib'd alone, it compresses no further.
    """
    if isinstance(serde, CompressingSerializer):
        return StrictSerializer.dumps_typed(serde, obj)
    return cast(tuple[str, bytes], serde.dumps_typed(obj))
