"""The 2017 abstracts dump at scale: import speed, memory, size, Search and Similar, recall.

Generates a synthetic dump in the distributed layout (`dump_corpus.py`: Wikipedia-shaped
titles and sentence lengths), imports it with `wikireact snapshot import` in a separate
process, and measures:

- throughput: pages/s (wall) and CPU time per page of the importer and its workers;
  the machine is shared, so the projection for idle cores is `cores / CPU-per-page`, capped
  by the writing process alone (`1 / its CPU-per-page`: it does not scale with cores);
- peak memory of the import (PSS of its process and workers, summed, every 0.1 s);
- database bytes per page, against the dump's uncompressed bytes and its plain text;
- exact-title Search p95 (through `environment.search`, as the agent calls it);
- Similar p95 and recall@5 for near-miss titles (one typo, or a dropped word);
- the projected build time of the full 5.2M-page dump from the measured curve.

    python dump_import.py              # 50k pages (part of `make bench`)
    python dump_import.py --full       # 100k and 1M pages: the issue's table

Corpora are cached in the temp folder (`wikireact-dump-N`): a 1M-page corpus takes
about 20 min to generate on 2 busy cores.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import dump_corpus
from table import Row, print_rows

from wikireact.wiki.environment import search
from wikireact.wiki.snapshot import SnapshotSource, normalize_title

DEFAULT_PAGES = 50_000
FULL_SIZES = (100_000, 1_000_000)
FULL_DUMP_PAGES = 5_233_329
CORES = 2
QUERIES = 1_000
NEAR_MISSES = 500
TARGETS = {
    "pages/s": 15_000.0,
    "peak RSS": 400.0,
    "bytes ratio": 1.5,
    "search p95": 1.0,
    "similar p95": 20.0,
    "recall": 0.95,
}


def corpus(pages: int) -> tuple[Path, int]:
    """Return a generated dump of `pages` pages (cached) and its uncompressed size."""
    root = Path(tempfile.gettempdir()) / f"wikireact-dump-{pages}"
    marker = root / "complete"
    if not marker.exists():
        shutil.rmtree(root, ignore_errors=True)
        size = dump_corpus.generate(root / "dump", pages)
        marker.write_text(str(size))
    return root / "dump", int(marker.read_text())


def tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and all its descendants.

    Proportional (PSS): the workers are forked from the importer and share its pages, which
    summed RSS would count once per process.
    """
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            rollup = Path(f"/proc/{current}/smaps_rollup").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        for line in rollup.splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1]) * 1024
        todo += [int(c) for c in children]
    return total


def process_cpu(pid: int) -> float:
    """CPU seconds `pid` itself has used so far (not its children)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_import(dump: Path, out: Path) -> dict[str, float]:
    """Import `dump` into `out` in a child process; return wall s, CPU s and peak RSS bytes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "wikireact", "snapshot", "import", str(dump), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak, writer = [0], [0.0]

    def sample() -> None:
        while process.poll() is None:
            peak[0] = max(peak[0], tree_rss(process.pid))
            writer[0] = max(writer[0], process_cpu(process.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"import failed: {stderr.strip().splitlines()[-1:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "rss": float(peak[0]), "writer cpu": writer[0]}


def p95(samples: list[float]) -> float:
    """Return the 95th percentile."""
    ordered = sorted(samples)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def timed(call: Callable[[str], object], queries: list[str]) -> tuple[list[float], list[float]]:
    """Return wall and CPU milliseconds of each call."""
    wall, cpu = [], []
    for query in queries:
        w, c = time.perf_counter(), time.thread_time()
        call(query)
        cpu.append((time.thread_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    return wall, cpu


def near_misses(
    titles: list[str], known: set[str], make: Callable[[str, random.Random], str | None]
) -> list[tuple[str, str]]:
    """`(query, meant title)` pairs whose query is not itself a title."""
    rng = random.Random(5)
    pairs: list[tuple[str, str]] = []
    while len(pairs) < NEAR_MISSES:
        title = rng.choice(titles)
        query = make(title, rng)
        if query is not None and normalize_title(query) not in known:
            pairs.append((query, title))
    return pairs


def measure(pages: int) -> dict[str, float]:
    """Generate, import and query a dump of `pages` pages; return its figures."""
    dump, dump_bytes = corpus(pages)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "wiki.db"
        load = os.getloadavg()[0]
        run = run_import(dump, out)
        source = SnapshotSource.open(out)
        conn = source.store.conn
        rows = conn.execute("SELECT title, kind FROM pages").fetchall()
        text_bytes = conn.execute(
            "SELECT sum(length(CAST(title AS BLOB)) + length(CAST(body AS BLOB))) FROM pages "
            "WHERE kind = 'page'"
        ).fetchone()[0]
        titles = [title for title, kind in rows if kind == "page"]
        known = {normalize_title(title) for title, _ in rows}
        rng = random.Random(3)
        search_wall, search_cpu = timed(lambda t: search(source, t), rng.sample(titles, QUERIES))
        figures = {
            "pages": float(pages),
            "load": load,
            "wall s": run["wall"],
            "pages/s": pages / run["wall"],
            "cpu us/page": run["cpu"] / pages * 1e6,
            "writer us/page": run["writer cpu"] / pages * 1e6,
            # Idle cores: all the CPU spread over the cores, but never faster than the writer alone.
            "idle pages/s": min(CORES * pages / run["cpu"], pages / max(run["writer cpu"], 1e-9)),
            "peak RSS": run["rss"] / 2**20,
            "bytes/page": out.stat().st_size / pages,
            "dump bytes/page": dump_bytes / pages,
            "text bytes/page": text_bytes / pages,
            "search p95": p95(search_wall),
            "search cpu p95": p95(search_cpu),
        }
        similar_wall: list[float] = []
        similar_cpu: list[float] = []
        for name, make in (("typo", dump_corpus.typo), ("dropped word", dump_corpus.drop_word)):
            pairs = near_misses(titles, known, make)
            found = 0
            for query, title in pairs:
                w, c = timed(lambda q: source.similar(q, 5), [query])
                similar_wall += w
                similar_cpu += c
                found += title in source.similar(query, 5)
            figures[f"recall {name}"] = found / len(pairs)
        figures["similar p95"] = p95(similar_wall)
        figures["similar cpu p95"] = p95(similar_cpu)
        source.store.conn.close()
    return figures


def _checked(name: str, value: float, unit: str, key: str, at_most: bool) -> Row:
    """Return a row compared with `TARGETS[key]` (a bound from above when `at_most`)."""
    target = TARGETS[key]
    ok = value <= target if at_most else value >= target
    return Row(name, value, unit, f"{'<=' if at_most else '>='} {target:,g}", ok)


def rows_for(results: list[dict[str, float]]) -> list[Row]:
    """Table rows for one or more sizes, with the issue's targets."""
    out: list[Row] = []
    for f in results:
        n = f"dump {int(f['pages']) // 1000}k:"
        ratio = f["bytes/page"] / f["dump bytes/page"]
        out += [
            Row(f"{n} import pages/s (load {f['load']:.1f}, wall)", f["pages/s"], "p/s"),
            Row(f"{n} import CPU per page (all processes)", f["cpu us/page"], "us"),
            Row(f"{n} of it in the writing process", f["writer us/page"], "us"),
            _checked(
                f"{n} pages/s on {CORES} idle cores", f["idle pages/s"], "p/s", "pages/s", False
            ),
            _checked(f"{n} peak RSS", f["peak RSS"], "MiB", "peak RSS", True),
            Row(f"{n} database bytes/page", f["bytes/page"], "B"),
            _checked(f"{n} bytes vs uncompressed dump", ratio, "x", "bytes ratio", True),
            Row(f"{n} bytes vs plain text", f["bytes/page"] / f["text bytes/page"], "x"),
            _checked(f"{n} exact-title Search p95", f["search p95"], "ms", "search p95", True),
            Row(f"{n} exact-title Search CPU p95", f["search cpu p95"], "ms"),
            _checked(f"{n} Similar p95", f["similar p95"], "ms", "similar p95", True),
            Row(f"{n} Similar CPU p95", f["similar cpu p95"], "ms"),
        ]
        for kind in ("typo", "dropped word"):
            value = f[f"recall {kind}"]
            out.append(_checked(f"{n} Similar recall@5, {kind}", value, "", "recall", False))
    out += _projection(results)
    return out


def _projection(results: list[dict[str, float]]) -> list[Row]:
    """Build time of the 5.2M-page dump, from a line through the measured sizes."""
    if len(results) >= 2:
        small, large = results[0], results[-1]
        per_page = (large["wall s"] - small["wall s"]) / (large["pages"] - small["pages"])
        wall = large["wall s"] + per_page * (FULL_DUMP_PAGES - large["pages"])
    else:
        wall = results[0]["wall s"] / results[0]["pages"] * FULL_DUMP_PAGES
    idle = FULL_DUMP_PAGES / results[-1]["idle pages/s"]
    return [
        Row("dump 5.2M: projected build (this load, wall)", wall / 60, "min"),
        Row(f"dump 5.2M: projected build ({CORES} idle cores)", idle / 60, "min"),
    ]


def rows() -> list[Row]:
    """Return the rows at the `make bench` size."""
    return rows_for([measure(DEFAULT_PAGES)])


def main(argv: list[str] | None = None) -> int:
    """Run at the `make bench` size, or with `--full` at 100k and 1M pages."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="100k and 1M pages")
    parser.add_argument("--pages", type=int, nargs="*", help="sizes to measure")
    args = parser.parse_args(argv)
    sizes = args.pages or (list(FULL_SIZES) if args.full else [DEFAULT_PAGES])
    results = []
    for pages in sizes:
        results.append(measure(pages))
        print(f"measured {pages} pages: {results[-1]}", file=sys.stderr)
    table = rows_for(results)
    if len(results) >= 2:
        flat = results[-1]["peak RSS"] / results[0]["peak RSS"]
        table.append(
            Row("dump: peak RSS, largest / smallest size", flat, "x", "<= 1.25", flat <= 1.25)
        )
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    return print_rows(table)


if __name__ == "__main__":
    sys.exit(main())
