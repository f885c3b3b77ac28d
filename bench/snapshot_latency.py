"""Snapshot title-lookup and similar-search latency on a generated corpus of 100k pages.

Prints p50/p95 in milliseconds. Targets (exit 1 when missed): title lookup p95 < 5 ms,
similar search p95 < 50 ms.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from table import Row, print_rows

from wikireact.wiki.snapshot import SnapshotDatabase, SnapshotSource

PAGES = 100_000
QUERIES = 2_000
WORDS = [f"w{i}" for i in range(20_000)]
TARGETS_MS = {"title lookup p95": 5.0, "similar search p95": 50.0}


def corpus(rng: random.Random) -> Iterator[tuple[str, str, str]]:
    """Yield the generated pages."""
    for i in range(PAGES):
        title = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} {i}"
        body = " ".join(" ".join(rng.choices(WORDS, k=12)) + "." for _ in range(rng.randint(3, 12)))
        yield title, "page", body


def percentiles(samples: list[float]) -> tuple[float, float]:
    """Return p50 and p95."""
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1]


def timed(fn: Callable[[str], object], inputs: list[str]) -> list[float]:
    """Return the milliseconds of each call."""
    out = []
    for value in inputs:
        start = time.perf_counter()
        fn(value)
        out.append((time.perf_counter() - start) * 1000)
    return out


def run() -> dict[str, float]:
    """Build the corpus, measure, and return the figures."""
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        start = time.perf_counter()
        store = SnapshotDatabase.create(path)
        store.put_many(corpus(rng))
        build_s = time.perf_counter() - start
        titles = [
            r[0]
            for r in store.conn.execute(
                "SELECT title FROM pages ORDER BY random() LIMIT ?", (QUERIES,)
            )
        ]
        store.conn.close()
        source = SnapshotSource.open(path)
        exact = timed(source.fetch, titles)
        fuzzy = timed(source.fetch, [t.lower() for t in titles])
        similar = timed(source.similar, [" ".join(rng.choices(WORDS, k=3)) for _ in range(QUERIES)])
        size_mb = path.stat().st_size / 2**20
    figures = {"build s (100k pages)": build_s, "file MiB": size_mb}
    for name, samples in (
        ("title lookup", exact),
        ("case-insensitive lookup", fuzzy),
        ("similar search", similar),
    ):
        p50, p95 = percentiles(samples)
        figures[f"{name} p50"], figures[f"{name} p95"] = p50, p95
    return figures


def rows() -> list[Row]:
    """Return the figures as table rows."""
    out = []
    for name, value in run().items():
        target = TARGETS_MS.get(name)
        unit = "s" if name.startswith("build") else ("MiB" if name.startswith("file") else "ms")
        out.append(
            Row(
                f"snapshot {name}",
                value,
                unit,
                f"< {target} ms" if target else "",
                None if target is None else value < target,
            )
        )
    return out


def main() -> int:
    """Print the figures and compare with the targets."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
