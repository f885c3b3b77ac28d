"""How stored checkpoints are decoded: only types on an explicit list, nothing else imported.

LangGraph's `JsonPlusSerializer` stores a value that msgpack cannot hold as an EXT record
`(module, name, arguments)` and, by default, decodes it by importing `module.name` and
calling it (CVE-2026-28277): a checkpoint file or database row could run any command when
read. `StrictSerializer` first reads a value's EXT records without importing anything and
refuses (`StoredTypeError`, one line naming where) any whose type is not in `ALLOWED_TYPES`;
only then does LangGraph decode it, with the same list as its `allowed_msgpack_modules`.

`names_refused_thread` makes a saver's readers add the thread to that message. Every saver
wikireact opens uses this serializer (the SQLite saver through `CompressingSerializer`, the
PostgreSQL saver through `NulTextSerializer`). The long-term Store keeps JSON and decodes it
with `orjson`, which builds no objects but dicts, lists and scalars.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import ormsgpack
from langgraph.checkpoint.serde.jsonplus import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_SINGLE_ARG,
    EXT_DELTA_SNAPSHOT,
    EXT_METHOD_SINGLE_ARG,
    EXT_PYDANTIC_V1,
    EXT_PYDANTIC_V2,
    JsonPlusSerializer,
)

from wikireact.errors import StoredTypeError

try:
    from langgraph.checkpoint.serde._msgpack import SAFE_MSGPACK_METHODS, SAFE_MSGPACK_TYPES
except ImportError as exc:  # pragma: no cover - only with a LangGraph that moved them
    raise ImportError(
        f"wikireact decodes checkpoints with LangGraph's list of safe types, which moved ({exc}); "
        "pin langgraph-checkpoint to a version this wikireact supports"
    ) from exc

WIKIREACT_TYPES: frozenset[tuple[str, str]] = frozenset()
"""wikireact's own types that its checkpoints hold as EXT records: none.

Every agent's state is TypedDicts of strings, numbers, lists and dicts (msgpack's own types);
an error is stored as its `repr`; delta-channel snapshots, `Send` and `Interrupt` are
LangGraph's. A type added to a state must be registered here, or reading it back is refused
(tests/agents/test_checkpoint_types.py runs every agent and checks what it writes)."""
ALLOWED_TYPES: frozenset[tuple[str, ...]] = SAFE_MSGPACK_TYPES | WIKIREACT_TYPES
"""`(module, name)` of every type a stored checkpoint may hold: LangGraph's safe types
(datetime, UUID, set, LangChain messages, `Send`, `Interrupt`, ...) and `WIKIREACT_TYPES`."""
_CONSTRUCTORS = frozenset(
    {
        EXT_CONSTRUCTOR_SINGLE_ARG,
        EXT_CONSTRUCTOR_POS_ARGS,
        EXT_CONSTRUCTOR_KW_ARGS,
        EXT_METHOD_SINGLE_ARG,
        EXT_PYDANTIC_V1,
        EXT_PYDANTIC_V2,
    }
)
_PLAIN_KINDS = frozenset({"null", "bytes", "bytearray", "json", "msgpack"})
"""Serialization tags decoded without a stored type (JSON revives only LangGraph's safe types)."""
_OPTIONS = ormsgpack.OPT_NON_STR_KEYS


def _shown(text: str) -> str:
    """Return stored text fit for a one-line message: printable, at most 120 characters."""
    return "".join(c if c.isprintable() else "?" for c in text[:120])


def _named_type(code: int, record: Any) -> tuple[str, bool]:
    """Return the type an EXT record names, and whether `ALLOWED_TYPES` allows it."""
    if code not in _CONSTRUCTORS:
        return f"msgpack extension {code}", False
    if not (
        isinstance(record, list | tuple)
        and len(record) >= 3
        and all(isinstance(part, str) for part in record[:2])
    ):
        return "a malformed record", False
    module, name = record[0], record[1]
    if code == EXT_METHOD_SINGLE_ARG:
        method = record[3] if len(record) > 3 else None
        allowed = (module, name, method) in SAFE_MSGPACK_METHODS
        return _shown(f"{module}.{name}.{method}"), allowed
    return _shown(f"{module}.{name}"), (module, name) in ALLOWED_TYPES


def refused_type(payload: bytes) -> str | None:
    """Return the first type msgpack `payload` names that is not allowed (None: all are).

    Reads the EXT records (nested ones too) without importing or calling anything.
    Raises msgpack's error for bytes that are not msgpack.
    """
    refused: list[str] = []

    def check(code: int, data: bytes) -> None:
        record = ormsgpack.unpackb(data, ext_hook=check, option=_OPTIONS)
        if code == EXT_DELTA_SNAPSHOT:  # LangGraph's wrapper of a delta channel's full value
            return None
        name, allowed = _named_type(code, record)
        if not allowed:
            refused.append(name)
            raise ValueError(name)  # stops reading at the refused record
        return None

    try:
        ormsgpack.unpackb(payload, ext_hook=check, option=_OPTIONS)
    except ValueError:  # ormsgpack wraps what the hook raised in "ext_hook failed"
        if refused:
            return refused[0]
        raise
    return None


class StrictSerializer(JsonPlusSerializer):
    """LangGraph's serializer that decodes only `ALLOWED_TYPES` and refuses anything else.

    `location` (a file, a database) names where the values come from in the refusal.
    """

    def __init__(self, *, location: str = "the checkpoint store") -> None:
        """Decode values stored in `location` with `ALLOWED_TYPES` as the allowlist."""
        super().__init__(allowed_msgpack_modules=ALLOWED_TYPES)
        self.location = location

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Decode a stored value; raise `StoredTypeError` for a type not allowed (nothing imported)."""
        kind, payload = data
        if kind not in _PLAIN_KINDS:
            what = "a pickled value" if kind == "pickle" else f"a value stored as {_shown(kind)!r}"
            raise StoredTypeError(self.location, what)
        if kind == "msgpack" and (name := refused_type(payload)) is not None:
            raise StoredTypeError(self.location, f"a value of type {name}")
        return super().loads_typed(data)

    def with_msgpack_allowlist(self, extra_allowlist: Iterable[tuple[str, ...] | type]) -> Any:
        """Keep `ALLOWED_TYPES`: what may be decoded is decided here, not from a graph's schemas."""
        return self


_READERS = ("get_tuple", "list", "list_checkpoints", "get_delta_channel_history")
Saver = TypeVar("Saver", bound=type)


def _thread_of(config: Mapping[str, Any] | None) -> str | None:
    configurable = (config or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    return None if thread_id is None else str(thread_id)


def _naming(method: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a reader so that a `StoredTypeError` names the thread its config selects."""
    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def listing(self: Any, config: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from method(self, config, *args, **kwargs)
            except StoredTypeError as exc:
                raise exc.in_thread(_thread_of(config)) from None

        return listing

    @functools.wraps(method)
    def reading(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except StoredTypeError as exc:
            raise exc.in_thread(
                _thread_of(kwargs.get("config", args[0] if args else None))
            ) from None

    return reading


def names_refused_thread(cls: Saver) -> Saver:
    """Class decorator: the saver's readers name the thread when a stored type is refused."""
    for name in _READERS:
        if hasattr(cls, name):
            setattr(cls, name, _naming(getattr(cls, name)))
    return cls
