"""A synthetic HotpotQA 2017 abstracts dump: `AA/wiki_00.bz2` ..., shaped like the real one.

The real `enwiki-20171001-pages-meta-current-withlinks-abstracts` holds 5,233,329 pages in
15,517 files (about 337 pages each) in folders `AA`, `AB`, ... of `wiki_00.bz2` ...
`wiki_99.bz2`; each line is one JSON object with `id`, `url`, `title`, `text` (the lead
paragraph as a list of sentences, the later ones starting with a space), `charoffset`
(token offsets per sentence), `text_with_links` (the same sentences with `<a href>`
markup) and `charoffset_with_links`. Titles are HTML-escaped (`&amp;`).

Shapes copied from Wikipedia: a third of the titles are people ("First Last", a
qualifier such as "(footballer)" or "(born 1962)" when the name is taken), places
("Town, Region"), works with "(film)"/"(album)", sentence-case topics ("Battle of X",
"List of ..."); a few disambiguation pages ("X may refer to:"). Words follow Zipf's
law; abstracts have 1 to 20 sentences (mean about 3.5) of about 22 words.

    python dump_corpus.py OUT_DIR --pages 1000000     # about 2 min per 100k pages per core

Files are written by one process per core; the same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import bz2
import itertools
import json
import math
import os
import random
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from urllib.parse import quote

PAGES_PER_FILE = 337
FILES_PER_FOLDER = 100
STOPWORDS = "the of and in a to was is for on as by with from at an which that his its it".split()
OCCUPATIONS = [
    "footballer", "politician", "actor", "musician", "writer", "cricketer", "singer",
    "painter", "American football", "baseball", "rugby union", "bishop", "journalist",
]  # fmt: skip
WORK_KINDS = ["film", "album", "song", "novel", "TV series", "band", "video game", "play"]
TOPIC_PATTERNS = ["{A}", "{A} {b}", "{A} {b} {c}", "Battle of {P}", "{P} River", "{A} of {P}",
                  "History of {P}", "{Y} {P} election", "List of {b} in {P}", "{P} railway station",
                  "University of {P}", "{A} {b} {c} {d}"]  # fmt: skip
ONSETS = "b c d f g h j k l m n p r s t v w z br ch cl dr gr kr pl sh st th tr".split()
VOWELS = "a e i o u a e i o ai ea ou ie".split()
CODAS = ["", "", "", "n", "r", "s", "l", "m", "nd", "rt", "st", "ck"]


def pseudo_words(count: int, rng: random.Random, syllables: tuple[int, int]) -> list[str]:
    """Return `count` distinct pronounceable lowercase words."""
    words: dict[str, None] = {}
    while len(words) < count:
        parts = [rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(rng.randint(*syllables))]
        words["".join(parts) + rng.choice(CODAS)] = None
    return list(words)


class Zipf:
    """Draw words with probability proportional to 1/(rank + offset)."""

    def __init__(self, words: Sequence[str], offset: int = 1) -> None:
        """Rank `words` in the given order (a larger `offset` flattens the head)."""
        self.words = list(words)
        self.cum = list(itertools.accumulate(1.0 / (r + offset) for r in range(len(self.words))))

    def draw(self, rng: random.Random, k: int = 1) -> list[str]:
        """Return `k` words."""
        return rng.choices(self.words, cum_weights=self.cum, k=k)


class Vocabulary:
    """The word lists titles and sentences are made of (deterministic for a seed)."""

    def __init__(self, seed: int) -> None:
        """Build every list from `seed`."""
        rng = random.Random(seed)
        self.first = Zipf([w.capitalize() for w in pseudo_words(3_000, rng, (1, 2))])
        self.last = Zipf([w.capitalize() for w in pseudo_words(60_000, rng, (2, 3))])
        self.place = Zipf([w.capitalize() for w in pseudo_words(40_000, rng, (2, 3))])
        self.region = Zipf([w.capitalize() for w in pseudo_words(300, rng, (2, 3))])
        common = pseudo_words(30_000, rng, (1, 3))
        self.common = Zipf(common)
        self.title_words = Zipf(common, offset=30)


def _topic(vocab: Vocabulary, rng: random.Random) -> str:
    a, b, c, d = vocab.title_words.draw(rng, 4)
    return rng.choice(TOPIC_PATTERNS).format(
        A=a.capitalize(), b=b, c=c, d=d, P=vocab.place.draw(rng)[0], Y=rng.randint(1800, 2017)
    )


def _base_title(vocab: Vocabulary, rng: random.Random) -> tuple[str, str]:
    """Return (kind, title) before any qualifier."""
    roll = rng.random()
    if roll < 0.34:
        first, last = vocab.first.draw(rng)[0], vocab.last.draw(rng)[0]
        middle = f" {chr(65 + rng.randrange(26))}." if rng.random() < 0.1 else ""
        return "person", f"{first}{middle} {last}"
    if roll < 0.50:
        place = vocab.place.draw(rng)[0]
        return "place", place if rng.random() < 0.4 else f"{place}, {vocab.region.draw(rng)[0]}"
    if roll < 0.62:
        words = [w.capitalize() for w in vocab.title_words.draw(rng, rng.randint(1, 4))]
        title = ("The " if rng.random() < 0.3 else "") + " ".join(words)
        if rng.random() < 0.5:
            title += f" ({rng.choice(WORK_KINDS)})"
        return "work", title
    title = _topic(vocab, rng)
    if rng.random() < 0.004:
        title = title.replace(" ", " &amp; ", 1) if " " in title else title + " &amp; Co"
    return "topic", title


def _qualified(kind: str, title: str, rng: random.Random, attempt: int) -> str:
    year = rng.randint(1850, 2000)
    title = title.split(" (")[0]
    if kind == "person":
        job = rng.choice(OCCUPATIONS)
        return [f"{title} ({job})", f"{title} (born {year})", f"{title} ({job}, born {year})"][
            min(attempt, 2)
        ]
    if kind == "work":
        return f"{title} ({rng.randint(1950, 2017)} {rng.choice(WORK_KINDS)})"
    what = rng.choice(["town", "village", "band", "company", "surname", "magazine"])
    return f"{title} ({what})" if attempt == 0 else f"{title} ({what}, {year})"


def make_titles(count: int, seed: int) -> list[str]:
    """Return `count` distinct Wikipedia-shaped titles (a few are disambiguation pages)."""
    vocab = Vocabulary(seed)
    rng = random.Random(seed + 1)
    seen: set[str] = set()
    titles: list[str] = []
    taken_bases: list[str] = []
    while len(titles) < count:
        if taken_bases and rng.random() < 0.006:
            base = taken_bases[rng.randrange(len(taken_bases))]
            candidate = f"{base} (disambiguation)" if base in seen else base
        else:
            kind, candidate = _base_title(vocab, rng)
            attempt = 0
            while candidate in seen and attempt < 6:
                taken_bases.append(candidate)
                candidate = _qualified(kind, candidate, rng, attempt)
                attempt += 1
        if candidate not in seen:
            seen.add(candidate)
            titles.append(candidate)
    return titles


def _sentence(vocab: Vocabulary, rng: random.Random, subject: str | None) -> list[str]:
    """Return the tokens of one sentence (words and punctuation)."""
    length = max(4, min(80, int(rng.lognormvariate(3.0, 0.45))))
    tokens = [subject, "is", rng.choice(["a", "an", "the"])] if subject else []
    while len(tokens) < length:
        roll = rng.random()
        if roll < 0.38:
            tokens.append(rng.choice(STOPWORDS))
        elif roll < 0.45:
            tokens.append(vocab.place.draw(rng)[0])
        elif roll < 0.48:
            tokens.append(str(rng.randint(1800, 2017)))
        elif roll < 0.52:
            tokens.append(",")
        else:
            tokens.append(vocab.common.draw(rng)[0])
    tokens[0] = tokens[0][:1].upper() + tokens[0][1:]
    return [t for i, t in enumerate(tokens) if t != "," or 0 < i < len(tokens) - 1] + ["."]


def _join(tokens: list[str]) -> str:
    return "".join(t if t in {",", "."} or i == 0 else " " + t for i, t in enumerate(tokens))


def _offsets(text: str, tokens: list[str], start: int) -> list[list[int]]:
    out, pos = [], 0
    for token in tokens:
        pos = text.index(token, pos)
        out.append([start + pos, start + pos + len(token)])
        pos += len(token)
    return out


def page_line(
    page_id: int, title: str, vocab: Vocabulary, targets: Sequence[str], rng: random.Random
) -> str:
    """Return one dump line (JSON) for the page `title`."""
    subject = title.split(" (")[0]
    if title.endswith("(disambiguation)") or rng.random() < 0.002:
        sentences_tokens = [[*subject.split(), "may", "refer", "to", ":"]]
    else:
        count = min(20, 1 + int(rng.expovariate(1 / 2.5)))
        sentences_tokens = [_sentence(vocab, rng, subject)] + [
            _sentence(vocab, rng, None) for _ in range(count - 1)
        ]
    text, with_links, offsets, offsets_links = [], [], [], []
    position = position_links = 0
    for number, tokens in enumerate(sentences_tokens):
        plain = (" " if number else "") + _join(tokens)
        linked_tokens = list(tokens)
        if len(tokens) > 6 and rng.random() < 0.8:
            at = rng.randrange(1, len(tokens) - 2)
            href = quote(targets[rng.randrange(len(targets))])
            linked_tokens[at : at + 1] = [f'<a href="{href}">', tokens[at], "</a>"]
        linked = (" " if number else "") + _join(linked_tokens).replace('"> ', '">').replace(
            " </a>", "</a>"
        )
        text.append(plain)
        with_links.append(linked)
        offsets.append(_offsets(plain, tokens, position))
        offsets_links.append(_offsets(linked, linked_tokens, position_links))
        position += len(plain)
        position_links += len(linked)
    record = {
        "id": str(page_id),
        "url": f"https://en.wikipedia.org/wiki?curid={page_id}",
        "title": title,
        "text": text,
        "charoffset": offsets,
        "text_with_links": with_links,
        "charoffset_with_links": offsets_links,
    }
    return json.dumps(record, ensure_ascii=False)


FILLER = {"of", "the", "in", "and", "a", "an", "on", "at", "for"}


def typo(title: str, rng: random.Random) -> str | None:
    """Return `title` with one edit (a letter dropped, added, changed, or two swapped) in a word."""
    words = title.split(" ")
    candidates = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if not candidates:
        return None
    at = rng.choice(candidates)
    word, cut = words[at], rng.randrange(1, len(words[at]) - 1)
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    words[at] = rng.choice(
        [
            word[:cut] + word[cut + 1 :],
            word[:cut] + letter + word[cut + 1 :],
            word[:cut] + letter + word[cut:],
            word[: cut - 1] + word[cut] + word[cut - 1] + word[cut + 1 :],
        ]
    )
    return " ".join(words)


def drop_word(title: str, rng: random.Random) -> str | None:
    """Return `title` without what a searcher leaves out.

    That is a filler word ("of", "the"), an initial ("John F. Kennedy" -> "John
    Kennedy"), or the qualifier in parentheses ("John Smith (footballer)" -> "John Smith").
    """
    base, _, qualifier = title.partition(" (")
    words = base.split(" ")
    droppable = [
        i for i, w in enumerate(words) if w.lower() in FILLER or (len(w) == 2 and w.endswith("."))
    ]
    choices = len(droppable) + (1 if qualifier and len(words) > 1 else 0)
    if len(words) < 2 or not choices:
        return None
    pick = rng.randrange(choices)
    if pick == len(droppable):
        return base
    at = droppable[pick]
    left = " ".join(words[:at] + words[at + 1 :])
    return f"{left} ({qualifier}" if qualifier else left


def folder_name(index: int) -> str:
    """Return WikiExtractor's folder name for folder number `index` (AA, AB, ..., ZZ)."""
    return chr(65 + index // 26) + chr(65 + index % 26)


def relative_path(file_index: int) -> str:
    """Return `AA/wiki_00.bz2` for file 0, `AB/wiki_03.bz2` for file 103, ..."""
    folder, number = divmod(file_index, FILES_PER_FOLDER)
    return f"{folder_name(folder)}/wiki_{number:02d}.bz2"


_WORKER: dict[str, object] = {}


def _init_worker(seed: int, targets: list[str]) -> None:
    _WORKER["vocab"] = Vocabulary(seed)
    _WORKER["targets"] = targets


def _write_file(job: tuple[Path, int, int, list[str], int]) -> int:
    out, file_index, first_id, titles, seed = job
    vocab = _WORKER["vocab"]
    targets = _WORKER["targets"]
    assert isinstance(vocab, Vocabulary) and isinstance(targets, list)
    rng = random.Random(seed * 1_000_003 + file_index)
    lines = [
        page_line(first_id + n * 3, title, vocab, targets, rng) + "\n"
        for n, title in enumerate(titles)
    ]
    path = out / relative_path(file_index)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(lines).encode()
    path.write_bytes(bz2.compress(data, 9))
    return len(data)


def _jobs(out: Path, titles: list[str], per_file: int, seed: int) -> Iterator[tuple]:
    for file_index in range(math.ceil(len(titles) / per_file)):
        chunk = titles[file_index * per_file : (file_index + 1) * per_file]
        yield out, file_index, 12 + file_index * per_file * 3, chunk, seed


def generate(out: Path, pages: int, seed: int = 0, per_file: int = PAGES_PER_FILE) -> int:
    """Write a dump of `pages` pages under `out`; return its uncompressed size in bytes."""
    titles = make_titles(pages, seed)
    targets = titles[: min(len(titles), 50_000)]
    workers = max(1, min(os.cpu_count() or 1, 8))
    with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(seed, targets)) as pool:
        return sum(pool.map(_write_file, _jobs(out, titles, per_file, seed), chunksize=4))


def main(argv: list[str] | None = None) -> int:
    """Command line: write a synthetic dump."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-file", type=int, default=PAGES_PER_FILE)
    args = parser.parse_args(argv)
    size = generate(args.out, args.pages, args.seed, args.per_file)
    print(f"{args.pages} pages, {size / 2**20:.1f} MiB uncompressed, in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
