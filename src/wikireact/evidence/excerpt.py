"""A citation as one short line for people: the page, the sentence index, the cited span in context."""

from __future__ import annotations

from wikireact.protocols.citations import Citation

CONTEXT_CHARS = 40
"""Characters shown on each side of the cited span before the sentence is cut with `...`."""


def excerpt(citation: Citation) -> tuple[str, str, str]:
    """Return the sentence around the cited span as (before, span, after), cut with `...`."""
    sentence, start, end = citation["sentence"], citation["start"], citation["end"]
    before, span, after = sentence[:start], sentence[start:end], sentence[end:]
    if len(before) > CONTEXT_CHARS:
        before = "..." + before[-CONTEXT_CHARS:].lstrip()
    if len(after) > CONTEXT_CHARS:
        after = after[:CONTEXT_CHARS].rstrip() + "..."
    return before, span, after


def source_label(citation: Citation) -> str:
    """Return where a citation comes from: `[Title] sentence 3` (`?` for what is not known)."""
    index = citation["sentence_index"]
    return f"[{citation['title'] or '?'}] sentence {'?' if index is None else index}"
