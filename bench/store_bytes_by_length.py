"""Checkpoint bytes per step by episode length, SQLite beside PostgreSQL; the 97-step ratio.

The step-length episode (`step_length.py`: a new page every 4 steps, Lookups between, no
step repeating another) of 300 and 1,200 steps (`python bench/store_bytes_by_length.py
4800` adds 4,800) runs on a SQLite file and on a throwaway PostgreSQL database, durability
"sync". Bytes per step: growth of the file after a WAL checkpoint, or of
`pg_total_relation_size` of the checkpoint tables (TOAST and indexes included), divided by
the steps (`postgres.used_bytes`). Then the 97-step, 8-page reading episode of
`checkpoint_growth.py` on SQLite: bytes on disk over its distinct content (target of the
issue: at most 2.0x; it was 2.5x). `step_length.py --stores` adds prose-like page text and
the PostgreSQL targets.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from checkpoint_growth import READING, reading_script
from checkpoint_growth import measure as growth_measure
from step_length import bytes_per_step
from table import Row, print_rows

from wikireact.errors import PgUnavailableError
from wikireact.storage.postgres.cluster import PgCluster
from wikireact.storage.threads import open_threads

LENGTHS = (300, 1_200)
TARGET_READING_RATIO = 2.0


def rows(lengths: tuple[int, ...] = LENGTHS) -> list[Row]:
    """Return the figures as table rows."""
    out: list[Row] = []
    try:
        cluster: PgCluster | None = PgCluster.start()
    except PgUnavailableError as exc:
        print(f"PostgreSQL unavailable, SQLite only: {exc}", file=sys.stderr)
        cluster = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("SQLite", "PostgreSQL"):
                if name == "PostgreSQL" and cluster is None:
                    continue
                found = {}
                for n in lengths:
                    target = (
                        str(Path(tmp) / f"{n}.db")
                        if cluster is None or name == "SQLite"
                        else cluster.create_database()
                    )
                    store = open_threads(target)
                    try:
                        found[n] = bytes_per_step(store, n)
                    finally:
                        store.close()
                    out.append(
                        Row(f"{name}: checkpoint bytes per step, {n:,} steps", found[n], "B")
                    )
                for n in lengths[1:]:
                    out.append(
                        Row(
                            f"{name}:   {n:,} vs {lengths[0]:,} steps",
                            found[n] / found[lengths[0]],
                            "x",
                        )
                    )
            outputs = reading_script(8)
            used, distinct = growth_measure(outputs, READING, Path(tmp) / "reading.db")
            ratio = used / distinct
            out.append(
                Row(
                    f"SQLite: {len(outputs)}-step reading episode / distinct content",
                    ratio,
                    "x",
                    f"<= {TARGET_READING_RATIO} (issue 35)",
                    ratio <= TARGET_READING_RATIO,
                )
            )
    finally:
        if cluster is not None:
            cluster.stop()
    return out


def main() -> int:
    """Print the figures."""
    extra = tuple(int(a) for a in sys.argv[1:])
    return print_rows(rows(LENGTHS + extra))


if __name__ == "__main__":
    sys.exit(main())
