"""Turn lines of the HotpotQA 2017 abstracts dump into snapshot rows (runs in worker processes).

A line is one JSON object: `id`, `url`, `title`, `text` (the lead paragraph as a list of
sentences, the later ones starting with a space), `charoffset`, `text_with_links` (the
same sentences with `<a href="...">` markup) and `charoffset_with_links`. Only `title`
and `text` are needed (`text_with_links`, with its markup dropped, when `text` is
missing). The dump's sentence split is kept: a page's body is its sentences, one per
line, with `split` set, so Lookup sees the sentences HotpotQA's supporting facts count.

What the abstracts allow of redirects and disambiguation:
- Titles and text are HTML-escaped in the dump (`Kiss &amp; Tell`): they are unescaped,
  and the escaped title becomes a redirect to the page, so both spellings find it.
- A page titled `X (disambiguation)`, or whose abstract is only "X may refer to:", is a
  disambiguation page; its options are the pages its abstract links to, and the
  snapshot's titles `X (...)` and `X, ...` (added when the import ends).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from wikireact.errors import BadLineError
from wikireact.wiki.importing import safe_json

_LINK_TAG = re.compile(r"</?a\b[^>]*>")
_HREF = re.compile(r'<a href="([^"]*)"')
_REFERS = ("refer to", "refers to", "stand for", "stands for")
DISAMBIGUATION_SUFFIX = " (disambiguation)"
MAX_EXAMPLES = 5

Row = tuple[str, str, str, bool]
"""`(title, kind, body, split)`, as `SnapshotDatabase.put_many` takes it."""


@dataclass
class Parsed:
    """What a block of lines gave: rows, pages, and the lines that could not be read."""

    rows: list[Row] = field(default_factory=list)
    pages: int = 0
    bad_lines: int = 0
    examples: list[str] = field(default_factory=list)
    """`FILE:LINE: reason` of the first bad lines (the first one is the error without skipping)."""


def clean_sentences(sentences: list[Any]) -> list[str]:
    """Return the non-empty sentences with link markup, entities and extra whitespace removed."""
    out = []
    for sentence in sentences:
        if not isinstance(sentence, str):
            raise BadLineError("a sentence is not a string")
        if "<" in sentence:
            sentence = _LINK_TAG.sub("", sentence)
        if "&" in sentence:
            sentence = html.unescape(sentence)
        cleaned = " ".join(sentence.split())
        if cleaned:
            out.append(cleaned)
    return out


def record_rows(record: Any) -> list[Row]:
    """Return the rows one dump record gives (a page, and a redirect from its escaped title)."""
    if not isinstance(record, dict):
        raise BadLineError("not a JSON object")
    raw_title = record.get("title")
    if not isinstance(raw_title, str) or not raw_title.strip():
        raise BadLineError('no "title" string')
    raw = record.get("text", record.get("text_with_links"))
    if not isinstance(raw, list):
        raise BadLineError('"text" is not a list of sentences')
    title = " ".join(html.unescape(raw_title).split())
    sentences = clean_sentences(raw)
    if _is_disambiguation(title, sentences):
        row: Row = (
            title,
            "disambiguation",
            json.dumps(_link_targets(record), ensure_ascii=False),
            False,
        )
    else:
        row = (title, "page", "\n".join(sentences), True)
    escaped = " ".join(raw_title.split())
    return [row, (escaped, "redirect", title, False)] if escaped != title else [row]


def _is_disambiguation(title: str, sentences: list[str]) -> bool:
    if title.endswith(DISAMBIGUATION_SUFFIX):
        return True
    if not sentences or len(sentences) > 2:
        return False
    last = sentences[-1].casefold()
    return last.endswith(":") and any(phrase in last for phrase in _REFERS)


def _link_targets(record: dict[str, Any]) -> list[str]:
    """Return the titles the abstract links to (first letter upper case, as MediaWiki has them)."""
    linked = record.get("text_with_links")
    if not isinstance(linked, list):
        return []
    targets: dict[str, None] = {}
    for sentence in linked:
        for href in _HREF.findall(sentence) if isinstance(sentence, str) else []:
            target = " ".join(html.unescape(unquote(href)).split())
            if target:
                targets[target[:1].upper() + target[1:]] = None
    return list(targets)


def parse_lines(data: bytes, name: str, first_line: int, skip_bad: bool) -> Parsed:
    """Parse a block of whole lines of file `name` starting at line `first_line`.

    Without `skip_bad`, parsing stops at the first bad line (its message is in `examples`).
    """
    parsed = Parsed()
    for offset, line in enumerate(data.split(b"\n")):
        if not line.strip():
            continue
        try:
            if len(line) > safe_json.MAX_VALUE_BYTES:
                raise BadLineError("a line longer than 64 MiB")
            rows = record_rows(safe_json.loads(line.decode("utf-8")))
        except (BadLineError, safe_json.JsonValueError, UnicodeDecodeError) as exc:
            reason = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
            parsed.bad_lines += 1
            if len(parsed.examples) < MAX_EXAMPLES:
                parsed.examples.append(f"{name}:{first_line + offset}: {reason}")
            if not skip_bad:
                return parsed
            continue
        parsed.pages += 1
        parsed.rows.extend(rows)
    return parsed
