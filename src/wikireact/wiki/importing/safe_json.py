"""Parse JSON from files a user hands us, with every failure one line and memory bounded.

Hostile input is bounded where it is read: a value nested deeper than `MAX_DEPTH` levels
(checked by wikireact itself, so every Python refuses the same input: 3.11's JSON reader
stops near 1,000 levels, 3.12's and later go much deeper) or a number of more than 4,300
digits is refused with
the file and the position, never a crash; a line or an item larger than `MAX_VALUE_BYTES`
is refused before it is held in memory whole. (ijson's C backend, used before, crashed
the process on a 4,301-digit number and took memory with the square of the nesting
depth.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, BinaryIO

from wikireact.errors import JsonValueError, SnapshotError

MAX_VALUE_BYTES = 64 * 2**20
"""The largest JSON line or array item read (a HotpotQA item is about 5 KB, a dump line 3 KB)."""
MAX_DEPTH = 100
"""The deepest nesting of lists and objects read (HotpotQA items and dump lines go 4 deep)."""
_CHUNK = 2**20
_DECODER = json.JSONDecoder()


def loads(text: str) -> Any:
    """Parse one JSON value; raise `JsonValueError` with a one-line reason."""
    try:
        return _shallow(json.loads(text), text)
    except RecursionError:
        raise JsonValueError("JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise JsonValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except (
        ValueError
    ) as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise JsonValueError(f"not readable JSON ({_first_line(exc)})") from None


def _shallow(value: Any, text: str) -> Any:
    """Return `value`, or raise `RecursionError` if it nests deeper than `MAX_DEPTH`.

    Text with fewer brackets than `MAX_DEPTH` cannot nest that deep, so the walk runs only
    for the rare large value.
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return value
    level: list[tuple[Any, int]] = [(value, 1)]
    while level:
        node, depth = level.pop()
        if depth > MAX_DEPTH:
            raise RecursionError
        if isinstance(node, list):
            level.extend((child, depth + 1) for child in node if isinstance(child, list | dict))
        elif isinstance(node, dict):
            level.extend(
                (child, depth + 1) for child in node.values() if isinstance(child, list | dict)
            )
    return value


def iter_array(handle: BinaryIO, name: str) -> Iterator[Any]:
    """Yield the items of the JSON array in `handle` one at a time (holding one item at once).

    Errors name the file, the item number and its byte offset.
    """
    reader = _ArrayReader(handle, name)
    yield from reader.items()


class _ArrayReader:
    """A top-level JSON array read item by item with `raw_decode` over a sliding buffer."""

    def __init__(self, handle: BinaryIO, name: str) -> None:
        self.handle = handle
        self.name = name
        self.buffer = ""
        self.pos = 0
        self.offset = 0  # characters consumed before buffer[0]
        self.pending = b""
        self.eof = False

    def _fill(self) -> bool:
        """Read more text into the buffer; False at the end of the file."""
        if self.eof:
            return False
        chunk = self.handle.read(_CHUNK)
        if not chunk:
            self.eof = True
            if self.pending:
                raise SnapshotError(f"{self.name} is not UTF-8 (it ends inside a character)")
            return False
        data = self.pending + chunk
        cut = len(data)
        while cut > 0 and cut > len(data) - 4 and (data[cut - 1] & 0xC0) == 0x80:
            cut -= 1
        if cut > 0 and data[cut - 1] >= 0xC0:
            cut -= 1  # a lead byte whose continuation is in the next chunk
        try:
            text = data[:cut].decode("utf-8")
        except UnicodeDecodeError:
            raise SnapshotError(f"{self.name} is not UTF-8") from None
        self.pending = data[cut:]
        self.offset += self.pos
        self.buffer = self.buffer[self.pos :] + text
        self.pos = 0
        return True

    def _skip_space(self) -> str:
        """Return the next non-space character (empty at the end of the file)."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self._fill():
                return ""

    def _fail(self, what: str) -> SnapshotError:
        return SnapshotError(f"{self.name}: {what} (at character {self.offset + self.pos})")

    def items(self) -> Iterator[Any]:
        if self._skip_space() != "[":
            raise SnapshotError(f"{self.name} is not a JSON list")
        self.pos += 1
        number = 0
        while True:
            following = self._skip_space()
            if following == "]" and number == 0:
                return
            number += 1
            yield self._item(number)
            following = self._skip_space()
            if following == "]":
                return
            if following != ",":
                raise self._fail(f"expected ',' or ']' after item {number}")
            self.pos += 1

    def _item(self, number: int) -> Any:
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
                _shallow(value, self.buffer[self.pos : end])
            except RecursionError:
                raise self._fail(f"item {number} is nested too deeply") from None
            except json.JSONDecodeError as exc:
                if len(self.buffer) - self.pos > MAX_VALUE_BYTES:
                    raise self._fail(f"item {number} is larger than 64 MiB") from None
                if self._fill():
                    continue  # the item may go on in the next chunk
                raise self._fail(f"item {number} is not valid JSON ({exc.msg})") from None
            except ValueError as exc:
                raise self._fail(f"item {number} is not readable ({_first_line(exc)})") from None
            if end == len(self.buffer) and not self.eof and self._fill():
                continue  # a number may go on in the next chunk
            self.pos = end
            return value


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]
