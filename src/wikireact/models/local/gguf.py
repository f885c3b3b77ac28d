"""A GGUF model file's header: checked before llama.cpp loads it, never the weights.

`--model local:PATH.gguf` reads the header here (format: the GGUF specification of
ggml-org): a missing, truncated or non-GGUF file, or a model without a chat template, is
refused in one line before any step runs (`wikireact.models.local.llama`). The header gives the parameter count (the sum of
the tensors' element counts), which decides the prompt variant
(`wikireact.models.variants.local_variant`), and the chat template the model was trained
with. `file_sha256` identifies the file in evaluation reports.
"""

from __future__ import annotations

import functools
import hashlib
import math
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wikireact.errors import GgufError

MAGIC = b"GGUF"
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
"""GGUF value types with a fixed size, as `struct` formats (8 is a string, 9 an array)."""
_STRING, _ARRAY = 8, 9
_LENGTH = struct.Struct("<Q")
_DEFAULT_ALIGNMENT = 32


@dataclass(frozen=True)
class GgufInfo:
    """What the header says: metadata (scalars and strings; arrays by length) and tensor shapes."""

    path: Path
    version: int
    metadata: dict[str, Any]
    parameters: int
    """Elements in all tensors: the model's parameter count."""

    @property
    def name(self) -> str:
        """The model's name from its metadata, else the file's name."""
        return str(self.metadata.get("general.name") or self.path.name)

    @property
    def chat_template(self) -> str | None:
        """The Jinja chat template the model was trained with (`tokenizer.chat_template`)."""
        template = self.metadata.get("tokenizer.chat_template")
        return template if isinstance(template, str) and template.strip() else None

    @property
    def context_length(self) -> int | None:
        """The context the model was trained with (`ARCH.context_length`), if the header says."""
        value = self.metadata.get(f"{self.metadata.get('general.architecture')}.context_length")
        return int(value) if isinstance(value, int) and value > 0 else None


class _Reader:
    """Little-endian reads from a buffer, raising `EOFError` past its end."""

    def __init__(self, data: Any) -> None:
        self.data, self.at = data, 0

    def read(self, fmt: str) -> Any:
        size = struct.calcsize("<" + fmt)
        if self.at + size > len(self.data):
            raise EOFError
        (value,) = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += size
        return value

    def skip(self, size: int) -> None:
        if self.at + size > len(self.data):
            raise EOFError
        self.at += size

    def skip_strings(self, count: int) -> None:
        at, length = self.at, _LENGTH.unpack_from
        for _ in range(count):
            at += 8 + length(self.data, at)[0]
        self.skip(at - self.at)

    def string(self) -> str:
        size = self.read("Q")
        if self.at + size > len(self.data):
            raise EOFError
        text = bytes(self.data[self.at : self.at + size]).decode("utf-8", "replace")
        self.at += size
        return text

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.read(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:  # skipped (vocabularies are long and nothing here needs them)
            item_kind, count = self.read("I"), self.read("Q")
            if item_kind in _SCALARS:
                self.skip(count * struct.calcsize("<" + _SCALARS[item_kind]))
            elif item_kind == _STRING:
                self.skip_strings(count)
            else:
                for _ in range(count):
                    self.value(item_kind)
            return count
        raise ValueError(f"unknown metadata type {kind}")


def read_gguf(path: str | Path) -> GgufInfo:
    """Return the header of the GGUF file at `path`; raise `GgufError` in one line if unusable."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            if file.read(4) != MAGIC:
                raise GgufError(f"{path} is not a GGUF model file (it does not start with GGUF)")
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _parse(path, data)
    except GgufError:
        raise
    except FileNotFoundError:
        raise GgufError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise GgufError(f"{path} is a directory, not a GGUF model file") from None
    except (EOFError, ValueError, struct.error):
        raise GgufError(
            f"{path} is not a complete GGUF model file (damaged or truncated)"
        ) from None
    except OSError as exc:
        raise GgufError(f"cannot read {path}: {exc.strerror or exc}") from None


def _parse(path: Path, data: Any) -> GgufInfo:
    reader = _Reader(data)
    reader.at = 4
    version = reader.read("I")
    if version not in (2, 3):
        raise GgufError(f"{path} is GGUF version {version}; llama.cpp reads versions 2 and 3")
    tensors, entries = reader.read("Q"), reader.read("Q")
    metadata = {reader.string(): reader.value(reader.read("I")) for _ in range(entries)}
    parameters, last_offset = 0, 0
    for _ in range(tensors):
        reader.string()
        dims = [reader.read("Q") for _ in range(reader.read("I"))]
        reader.read("I")  # the tensor's type
        last_offset = max(last_offset, reader.read("Q"))
        parameters += math.prod(dims)
    alignment = int(metadata.get("general.alignment") or _DEFAULT_ALIGNMENT)
    data_start = -(-reader.at // alignment) * alignment
    if tensors and data_start + last_offset >= len(data):
        raise EOFError  # the weights stop before the last tensor starts
    return GgufInfo(path=path, version=version, metadata=metadata, parameters=parameters)


@functools.lru_cache(maxsize=16)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def file_sha256(path: str | Path) -> str:
    """Return the file's sha256 (computed once per file version and process)."""
    stat = Path(path).stat()
    return _digest(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)
