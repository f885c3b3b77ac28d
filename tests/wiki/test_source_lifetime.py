"""Open Wikipedia sources have an owner: shared ones are closed by `close_sources`, others by `with`."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from support import write_snapshot

from wikireact.wiki.factory import SHARED_SOURCES, close_sources, open_source
from wikireact.wiki.snapshot import SnapshotSource

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")


def files_open_under(folder: Path) -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)):
            found.append(target)
    return found


def test_shared_sources_are_closed_by_their_owner(tmp_path: Path) -> None:
    snapshots = [write_snapshot(tmp_path / f"s{n}.db") for n in range(SHARED_SOURCES + 8)]
    for path in snapshots:
        assert open_source(str(path)).fetch("Ed Wood") is not None
    assert open_source(str(snapshots[-1])) is open_source(str(snapshots[-1]))  # shared
    gc.collect()
    held = {Path(f).name.split(".db")[0] for f in files_open_under(tmp_path)}
    assert len(held) <= SHARED_SOURCES  # those dropped are closed once unused, not kept
    close_sources()
    assert files_open_under(tmp_path) == []


def test_a_source_of_ones_own_closes_with_its_block(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path / "own.db")
    with SnapshotSource.open(path) as source:
        assert source.fetch("Ed Wood") is not None
        assert files_open_under(tmp_path)
    assert files_open_under(tmp_path) == []
