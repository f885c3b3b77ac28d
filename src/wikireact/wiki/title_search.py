"""`Similar:` titles at scale: every word of a title, one typo away, closest titles first.

A Search that misses shows the titles a person would pick. Misses are near misses: a
typo ("Albert Einstien") or a word too many or too few ("Battle Hastings"). Three
tables of a snapshot serve them:

- `titles_fts`: an FTS5 index of titles only (no positions), so a query's words are
  matched against the 1 M-page title list without scanning page bodies.
- `title_terms`: every title word and how many titles hold it (FTS5's own `fts5vocab`
  counts by reading the word's whole posting list: milliseconds for "of").
- `title_typos`: each title word of 4+ characters under its one-deletion keys (the
  SymSpell method): two words one edit apart (a letter dropped, added, changed, or two
  neighbours swapped) share a key, so a misspelt word finds its corrections by index.

A query's words become groups (the word and its one-edit corrections); titles holding
every group are candidates first, then those missing one group, then those holding any
uncommon group. Candidates are ranked by a cost: the rarity (idf) of the query's
groups they miss, one per title word the query does not have, half a point per
correction used; then by closest length. A group held
by more than `COMMON` titles is not ranked by FTS5 (bm25 over tens of thousands of
matches costs tens of milliseconds): such queries are vague, and any of their matches
is as good a suggestion.
"""

from __future__ import annotations

import math
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator

SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS titles_fts USING fts5(
    title, content='pages', content_rowid='id', detail=none,
    tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS titles_vocab USING fts5vocab(titles_fts, 'row');
CREATE TABLE IF NOT EXISTS title_terms(
    term TEXT PRIMARY KEY, titles INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS title_typos(
    key TEXT NOT NULL, term TEXT NOT NULL, PRIMARY KEY (key, term)
) WITHOUT ROWID;
"""
MIN_TYPO_LENGTH = 4
"""Shorter words are not corrected: one edit turns them into too many other words."""
MAX_QUERY_WORDS = 12
MAX_CORRECTIONS = 8
CANDIDATES = 50
COMMON = 500
FREQUENT = 0.05
CORRECT_BELOW = 50
"""A word held by this many titles is taken as meant, not as a typo."""
LOOSER = ""
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Return the words of `text` as FTS5's `unicode61 remove_diacritics 2` sees them."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    folded = unicodedata.normalize("NFKD", text.casefold())
    out: list[str] = []
    current: list[str] = []
    for ch in folded:
        if unicodedata.combining(ch):
            continue
        if ch.isalnum():
            current.append(ch)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


def deletion_keys(word: str) -> set[str]:
    """Return `word` and every string made by deleting one of its characters."""
    return {word} | {word[:i] + word[i + 1 :] for i in range(len(word))}


def within_one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by at most one insertion, deletion, substitution or swap."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        swapped = i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i]
        return a[i + 1 :] == b[i + 1 :] or (swapped and a[i + 2 :] == b[i + 2 :])
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[i + 1 :] == shorter[i:]


def add_title_words(conn: sqlite3.Connection, counts: Iterable[tuple[str, int]]) -> None:
    """Count `(term, titles)` pairs into `title_terms`, indexing new terms' deletion keys."""
    for term, titles in counts:
        known = conn.execute(
            "UPDATE title_terms SET titles = titles + ? WHERE term = ?", (titles, term)
        ).rowcount
        if not known:
            conn.execute("INSERT INTO title_terms VALUES (?, ?)", (term, titles))
            if len(term) >= MIN_TYPO_LENGTH:
                conn.executemany(
                    "INSERT OR IGNORE INTO title_typos VALUES (?, ?)",
                    ((key, term) for key in deletion_keys(term) if key != term),
                )


def index_all_titles(conn: sqlite3.Connection) -> None:
    """Rebuild the title index and word tables from every title but `missing` rows."""
    conn.execute("INSERT INTO titles_fts(titles_fts) VALUES ('delete-all')")
    conn.execute(
        "INSERT INTO titles_fts(rowid, title) SELECT id, title FROM pages WHERE kind != 'missing'"
    )
    conn.execute("DELETE FROM title_terms")
    conn.execute("DELETE FROM title_typos")
    conn.execute("INSERT INTO title_terms SELECT term, doc FROM titles_vocab")
    terms = conn.execute(  # a cursor, not a list: memory stays flat in the vocabulary's size
        "SELECT term FROM title_terms WHERE length(term) >= ?", (MIN_TYPO_LENGTH,)
    )
    conn.executemany(
        "INSERT OR IGNORE INTO title_typos VALUES (?, ?)",
        ((key, term) for (term,) in terms for key in deletion_keys(term) if key != term),
    )


def has_title_index(conn: sqlite3.Connection) -> bool:
    """Whether the snapshot has the title tables (snapshots before schema 2 do not)."""
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'title_terms' AND type = 'table'"
        ).fetchone()
        is not None
    )


class TitleSearch:
    """Similar titles for one query over one snapshot connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        """Search the snapshot open on `conn` (the caller serialises access)."""
        self.conn = conn

    def similar(self, query: str, limit: int) -> list[str]:
        """Up to `limit` titles closest to `query`, best first."""
        query_words = list(dict.fromkeys(words(query)))[:MAX_QUERY_WORDS]
        groups = [g for g in (self._group(w) for w in query_words) if g]
        if not groups:
            return []
        titles = self._titles()
        sizes = [sum(count for _, count in group) for group in groups]
        parts = ["(" + " OR ".join(f'"{term}"' for term, _ in group) + ")" for group in groups]
        # Words most titles hold ("of", "the") slow FTS5 down and select nothing: they only rank.
        chosen = [i for i, size in enumerate(sizes) if size <= titles * FREQUENT] or list(
            range(len(groups))
        )
        found: dict[str, None] = {}
        for expression, ranked in self._expressions(parts, sizes, chosen):
            if expression == LOOSER and found:
                continue
            for title in self._matching(expression, ranked) if expression != LOOSER else []:
                found.setdefault(title, None)
            if len(found) >= limit:
                break
        scorer = _Scorer(query_words, groups, titles)
        return sorted(found, key=scorer.cost)[:limit]

    @staticmethod
    def _expressions(
        parts: list[str], sizes: list[int], chosen: list[int]
    ) -> Iterator[tuple[str, bool]]:
        """`(FTS5 query, rank it?)` from the strictest (every group) to the loosest (any group).

        The one-group-left-out queries (`LOOSER` marks them) run only when no title holds
        every group.
        """
        yield " AND ".join(parts[i] for i in chosen), min(sizes[i] for i in chosen) <= COMMON
        if 3 <= len(chosen) <= 5:
            yield LOOSER, False
            for out in chosen:
                rest = [i for i in chosen if i != out]
                yield " AND ".join(parts[i] for i in rest), min(sizes[i] for i in rest) <= COMMON
        uncommon = [parts[i] for i in chosen if sizes[i] <= COMMON]
        if len(chosen) > 1 and uncommon:
            yield " OR ".join(uncommon), True

    def _titles(self) -> int:
        """About how many titles there are (the largest row id: no count over 1 M rows)."""
        row = self.conn.execute("SELECT max(rowid) FROM pages").fetchone()
        return int(row[0] or 0)

    def _group(self, word: str) -> list[tuple[str, int]]:
        """`(term, titles holding it)` for the word and its one-edit corrections, commonest first."""
        row = self.conn.execute("SELECT titles FROM title_terms WHERE term = ?", (word,)).fetchone()
        exact = [(word, int(row[0]))] if row else []
        if (row and row[0] >= CORRECT_BELOW) or len(word) < MIN_TYPO_LENGTH - 1:
            return exact
        keys = sorted(key for key in deletion_keys(word) if len(key) >= MIN_TYPO_LENGTH - 1)
        marks = ",".join("?" * len(keys))
        rows = self.conn.execute(
            "SELECT term, titles FROM title_terms WHERE term IN "
            f"(SELECT term FROM title_typos WHERE key IN ({marks}) UNION SELECT ?) "
            f"OR term IN ({marks})",
            [*keys, word, *keys],
        ).fetchall()
        close = [(t, c) for t, c in rows if t != word and within_one_edit(word, t)]
        close.sort(key=lambda pair: (-pair[1], pair[0]))
        return exact + close[:MAX_CORRECTIONS]

    def _matching(self, expression: str, ranked: bool) -> list[str]:
        order = "ORDER BY titles_fts.rank " if ranked else ""
        rows = self.conn.execute(
            "SELECT pages.title FROM titles_fts JOIN pages ON pages.id = titles_fts.rowid "
            f"WHERE titles_fts MATCH ? {order}LIMIT ?",
            (expression, CANDIDATES),
        ).fetchall()
        return [row[0] for row in rows]


class _Scorer:
    """The cost of a candidate title: lower is closer to the query."""

    def __init__(
        self, query_words: list[str], groups: list[list[tuple[str, int]]], titles: int
    ) -> None:
        self.query_words = query_words
        self.groups = [{term for term, _ in group} for group in groups]
        self.weights = [
            math.log((titles + 1) / (1 + min(count for _, count in group))) for group in groups
        ]
        self.terms = set().union(*self.groups)
        self.length = sum(map(len, query_words))

    def cost(self, title: str) -> tuple[float, int]:
        """Missed rarity + extra words + corrections, then the length difference."""
        title_words = words(title)
        present = set(title_words)
        missed = sum(
            weight
            for group, weight in zip(self.groups, self.weights, strict=True)
            if not group & present
        )
        corrections = sum(1 for group in self.groups if group & present) - sum(
            1 for word in self.query_words if word in present
        )
        extra = sum(1 for word in title_words if word not in self.terms)
        return missed + extra + 0.5 * max(corrections, 0), abs(
            sum(map(len, title_words)) - self.length
        )
