"""`Similar:` finds the page a near-miss title meant, on a 20k-page synthetic dump.

The same check runs at 1M pages in `bench/dump_import.py`. A near miss is a title with
one typo (a letter dropped, added, changed or two swapped) or without what a searcher
leaves out (a filler word, an initial, or the qualifier in parentheses of a title of two
or more words); queries that are themselves titles are not near misses (Search opens them).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.wiki.environment import search
from wikireact.wiki.snapshot import SnapshotSource, normalize_title

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import dump_corpus  # noqa: E402  (the benchmark's generator: the same corpus shape at any size)

PAGES = 20_000
QUERIES = 300


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("recall")
    dump_corpus.generate(root / "dump", PAGES, seed=3)
    out = root / "wiki.db"
    result = CliRunner().invoke(app, ["snapshot", "import", str(root / "dump"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.slow
@pytest.mark.parametrize("near_miss", [dump_corpus.typo, dump_corpus.drop_word])
def test_near_miss_titles_find_their_page_among_five_suggestions(
    snapshot: Path, near_miss: object
) -> None:
    source = SnapshotSource.open(snapshot)
    rows = source.store.conn.execute("SELECT title, kind FROM pages").fetchall()
    titles = [title for title, kind in rows if kind == "page"]
    known = {normalize_title(title) for title, _ in rows}
    rng = random.Random(11)
    found = asked = 0
    misses = []
    while asked < QUERIES:
        title = rng.choice(titles)
        query = near_miss(title, rng)  # type: ignore[operator]
        if query is None or normalize_title(query) in known:
            continue
        asked += 1
        outcome = search(source, query)
        assert outcome.observation.startswith(f"Could not find {query}. Similar: ")
        if title in source.similar(query, 5):
            found += 1
        else:
            misses.append((query, title))
    assert found / asked >= 0.95, misses[:10]
