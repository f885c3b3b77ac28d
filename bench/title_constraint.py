"""The title constraint at scale: memory and per-token cost over 1 M synthetic titles.

`known_titles` decodes a local model's `Search[...]` so that it spells only titles the
snapshot holds (`wikireact.models.local.title_constraint`). Each generated token inside a
Search argument costs one check of the preferred token against the sorted titles
(`wikireact.wiki.title_index`); a refused token costs one check per short-listed token.
This prints the index's memory and build time, and the cost of one check, walking random
titles piece by piece as a model would (pieces of 1 to 6 characters), with two searched
titles refused and five `Similar:` suggestions open, as on a late step.

    python bench/title_constraint.py [--titles 1000000] [--snapshot PATH.db]

`--snapshot` measures a real snapshot's index instead (built from its file, as decoding does).
"""

from __future__ import annotations

import argparse
import random
import resource
import string
import time
from collections.abc import Callable
from pathlib import Path

from wikireact.models.local.title_constraint import TitleCheck
from wikireact.wiki.title_index import TitleIndex

SEED = 41
WORDS = 40_000
SUFFIXES = ("", "", "", "", " (film)", " (album)", " (band)", ", Ontario", " F.C.")


def synthetic_titles(count: int) -> list[str]:
    """Return `count` distinct title-like strings: 1-4 capitalised words, some qualified."""
    rng = random.Random(SEED)
    letters = string.ascii_lowercase
    words = [
        "".join(rng.choice(letters) for _ in range(rng.randint(3, 10))).capitalize()
        for _ in range(WORDS)
    ]
    titles: set[str] = set()
    while len(titles) < count:
        title = " ".join(rng.choice(words) for _ in range(rng.randint(1, 4)))
        titles.add(title + rng.choice(SUFFIXES))
    return sorted(titles)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pieces(title: str, rng: random.Random) -> list[str]:
    """Cut `title` into token-like pieces of 1-6 characters, then the closing bracket."""
    out, at = [], 0
    while at < len(title):
        size = rng.randint(1, 6)
        out.append(title[at : at + size])
        at += size
    return [*out, "]"]


def main() -> None:
    """Build the index, then time the checks a decoding makes; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--titles", type=int, default=1_000_000)
    parser.add_argument("--snapshot", type=Path)
    args = parser.parse_args()
    rng = random.Random(SEED)
    if args.snapshot:
        before = _peak_rss_mb()
        started = time.perf_counter()
        index = TitleIndex.from_snapshot(args.snapshot)
        titles = [index_title.decode() for index_title in _sample(index, rng)]
    else:
        titles = synthetic_titles(args.titles)
        before = _peak_rss_mb()
        started = time.perf_counter()
        index = TitleIndex(titles)
    built = time.perf_counter() - started
    print(f"titles: {len(index):,}")
    print(
        f"index: {index.memory_bytes() / 1e6:.1f} MB ({index.memory_bytes() / len(index):.1f} B/title)"
    )
    print(f"peak RSS growth while building: {_peak_rss_mb() - before:.0f} MB; build {built:.1f} s")

    searched = rng.sample(titles, 2)
    refused = [p for t in searched for p in (t[:4], f"the {t[:4]}")]
    suggested = rng.sample(titles, 5)
    walks = [rng.choice(titles) for _ in range(2_000)]
    preferred = refused_checks = 0
    preferred_seconds = refused_seconds = 0.0
    for title in walks:
        pieces = _pieces(title, rng) if not title.lower().startswith(tuple(refused)) else []
        vocabulary = [*pieces, "x", " Q", "zz"]  # the title's own pieces, and three that fit none
        check = TitleCheck(index, _pieces_of(vocabulary), refused=refused, suggested=suggested)
        check.follow(-1)
        for token in range(len(pieces)):
            started = time.perf_counter()
            assert check.rank(token) is not None, (title, pieces[: token + 1])
            preferred_seconds += time.perf_counter() - started
            preferred += 1
            started = time.perf_counter()
            for wrong in range(len(pieces), len(vocabulary)):
                check.rank(wrong)
            refused_seconds += time.perf_counter() - started
            refused_checks += len(vocabulary) - len(pieces)
            check.follow(token)
    print(
        f"per token in a Search argument (preferred token allowed): "
        f"{preferred_seconds / preferred * 1e6:.1f} us over {preferred:,} tokens"
    )
    print(
        f"per refused candidate (a fallback checks up to 64 such): "
        f"{refused_seconds / refused_checks * 1e6:.1f} us over {refused_checks:,} checks"
    )


def _pieces_of(vocabulary: list[str]) -> Callable[[int], bytes]:
    """Return the token pieces of `vocabulary`; token -1 opens the Search."""
    return lambda token: ("Search[" if token < 0 else vocabulary[token]).encode()


def _sample(index: TitleIndex, rng: random.Random) -> list[bytes]:
    """Return up to 2,000 titles of `index`, spread over it."""
    titles = index._titles
    return [titles[rng.randrange(len(titles))] for _ in range(min(2_000, len(titles)))]


if __name__ == "__main__":
    main()
