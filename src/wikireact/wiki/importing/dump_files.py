"""Find the files of an abstracts dump and cut them into work for the parsing processes.

A dump is given as distributed: a folder tree (`AA/wiki_00.bz2` ...), one `.bz2` file,
or a `.tar.bz2` of the tree (read as a stream, never unpacked to disk). Small `.bz2`
files (the dump's are ~100 KB) go whole to a worker, which decompresses and parses them;
a large one is decompressed here and sent on as blocks of lines. Every unit carries the
file's name (relative to the dump's root) and its first line number, so errors name both.

The file list is identified by the sha256 of its `name<TAB>size` lines in name order,
a file's name being its folder and file name (`AA/wiki_00.bz2`): a tree and the
`.tar.bz2` it came from match. A `.tar.bz2` is read once (its outer bzip2 stream takes
minutes for the full dump): its files are listed as they are met.
"""

from __future__ import annotations

import bz2
import hashlib
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from wikireact.errors import SnapshotError

WHOLE_FILE_LIMIT = 4 * 2**20
"""A `.bz2` file up to this size is decompressed by a worker; a larger one here, in blocks."""
BLOCK_BYTES = 4 * 2**20
MAX_LINE_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Unit:
    """Work for one parsing process: whole lines, or a whole `.bz2` file to decompress first."""

    name: str
    first_line: int
    data: bytes
    compressed: bool
    last: bool
    """The file's last unit: the file counts as done when it is written."""
    size: int
    """Input bytes this unit accounts for (for progress)."""
    damage: str | None = None
    """Why the file could not be read past this unit (a corrupt or truncated `.bz2`)."""


@dataclass(frozen=True)
class DumpFile:
    """One file of the dump: its name relative to the root, and its size in bytes."""

    name: str
    size: int


def is_dump(path: Path) -> bool:
    """Whether `path` is given as an abstracts dump (a folder, `.bz2` or `.tar.bz2`)."""
    return path.is_dir() or path.name.endswith(".bz2")


def _wanted(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".bz2") or base.startswith("wiki_")


class Dump:
    """The files of one dump, listed before anything is parsed."""

    def __init__(self, path: Path) -> None:
        """List the files of the dump at `path` (a tar's as they are read); refuse an empty tree."""
        self.path = path
        self.is_tar = path.is_file() and path.name.endswith((".tar.bz2", ".tbz2"))
        try:
            self.files = [] if self.is_tar else self._list()
        except OSError as exc:
            raise SnapshotError(f"cannot read the dump {path}: {exc}") from None
        if not self.files and not self.is_tar:
            raise SnapshotError(f"{path} holds no dump files (AA/wiki_00.bz2 ...)")

    @property
    def total_bytes(self) -> int:
        """Bytes to read: the archive's size for a `.tar.bz2`, else the files' sizes."""
        return self.path.stat().st_size if self.is_tar else sum(f.size for f in self.files)

    def file_list_sha256(self) -> str:
        """Return the sha256 of `name<TAB>size` lines of the dump's files, in name order."""
        digest = hashlib.sha256()
        for item in sorted(self.files, key=lambda f: f.name):
            digest.update(f"{item.name}\t{item.size}\n".encode())
        return digest.hexdigest()

    def _list(self) -> list[DumpFile]:
        if self.path.is_dir():
            return [
                DumpFile(_short_name(p.relative_to(self.path).as_posix()), p.stat().st_size)
                for p in sorted(self.path.rglob("*"))
                if p.is_file() and _wanted(p.name)
            ]
        return [DumpFile(self.path.name, self.path.stat().st_size)]

    def units(self) -> Iterator[Unit]:
        """Yield the work, file by file in name order (a tar in archive order)."""
        if self.is_tar:
            yield from self._tar_units()
            return
        paths = (
            sorted(p for p in self.path.rglob("*") if p.is_file() and _wanted(p.name))
            if self.path.is_dir()
            else [self.path]
        )
        for item, path in zip(self.files, paths, strict=True):
            with path.open("rb") as handle:
                yield from _file_units(item, handle)

    def _tar_units(self) -> Iterator[Unit]:
        try:
            with tarfile.open(self.path, "r|bz2") as archive:
                for member in archive:
                    if not (member.isfile() and _wanted(member.name)):
                        continue
                    handle = archive.extractfile(member)
                    assert handle is not None  # a regular file
                    self.files.append(DumpFile(_short_name(member.name), member.size))
                    yield from _file_units(self.files[-1], handle)
        except (OSError, tarfile.TarError, EOFError) as exc:
            raise SnapshotError(f"cannot read the dump {self.path}: {exc}") from None
        if not self.files:
            raise SnapshotError(f"{self.path} holds no dump files (AA/wiki_00.bz2 ...)")


def _short_name(name: str) -> str:
    """Return a dump file's folder and name: `root/AA/wiki_00.bz2` -> `AA/wiki_00.bz2`."""
    return "/".join(name.split("/")[-2:])


def _file_units(item: DumpFile, handle: IO[bytes]) -> Iterator[Unit]:
    compressed = item.name.endswith(".bz2")
    if compressed and item.size <= WHOLE_FILE_LIMIT:
        yield Unit(item.name, 1, handle.read(), True, True, item.size)
        return
    stream: IO[bytes] = bz2.BZ2File(handle) if compressed else handle
    yield from _line_blocks(item, stream)


def _line_blocks(item: DumpFile, stream: IO[bytes]) -> Iterator[Unit]:
    """Cut a (decompressed) stream into blocks of whole lines."""
    line, rest, read_before = 1, b"", 0
    while True:
        try:
            chunk = stream.read(BLOCK_BYTES)
        except (OSError, EOFError) as exc:
            yield Unit(item.name, line, b"", False, True, item.size - read_before, _reason(exc))
            return
        position = _position(stream, read_before + len(chunk), item.size)
        if not chunk:
            yield Unit(item.name, line, rest, False, True, item.size - read_before)
            return
        data = rest + chunk
        cut = data.rfind(b"\n") + 1
        block, rest = data[:cut], data[cut:]
        if len(rest) > MAX_LINE_BYTES:
            where = line + block.count(b"\n")
            raise SnapshotError(f"{item.name}:{where}: a line longer than 64 MiB")
        yield Unit(item.name, line, block, False, False, position - read_before)
        line += block.count(b"\n")
        read_before = position


def _position(stream: IO[bytes], fallback: int, size: int) -> int:
    """Compressed bytes read so far (for progress), never past the file's size."""
    raw = getattr(stream, "_fp", None)
    try:
        where = raw.tell() if raw is not None else fallback
    except (OSError, AttributeError):
        where = fallback
    return min(where, size)


def _reason(exc: BaseException) -> str:
    text = str(exc)
    if "end-of-stream" in text:
        return "the file is truncated"
    return f"not a valid bzip2 stream: {text}" if text else type(exc).__name__


def decompress(unit: Unit, max_bytes: int) -> tuple[bytes, str | None]:
    """Decompress a whole-file unit (several streams, as pbzip2 writes, allowed).

    Returns the data and, if the file is damaged, why (the data then ends where it broke).
    """
    out: list[bytes] = []
    total = 0
    data = unit.data
    while data:
        decompressor = bz2.BZ2Decompressor()
        try:
            chunk = decompressor.decompress(data, max_length=max_bytes - total + 1)
        except OSError as exc:
            return b"".join(out), _reason(exc)
        out.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            return b"".join(out)[:max_bytes], f"it decompresses to more than {max_bytes >> 20} MiB"
        if not decompressor.eof:
            return b"".join(out), "the file is truncated"
        data = decompressor.unused_data
    return b"".join(out), None
