"""Which sentences of a page an observation showed, with the page's title and own indices.

`act` (and ReWOO's worker) record these beside each observation, so evidence is read from
what the environment showed, never from the model's text. A sentence counts only when the
observation (sanitised and capped) shows it whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from wikireact.prompting.quoting import sanitize_observation
from wikireact.protocols.citations import ShownSentence
from wikireact.wiki.environment import FIRST_SENTENCES


def shown_sentences(
    title: str | None, sentences: Sequence[str], indices: Sequence[int], observation: str
) -> list[ShownSentence]:
    """Return the sentences at `indices` of page `title` that `observation` shows whole."""
    shown = []
    for index in indices:
        if not 0 <= index < len(sentences):
            continue
        text = sanitize_observation(sentences[index])
        if text and text in observation:
            shown.append(ShownSentence(title=title, sentence_index=index, sentence=text))
    return shown


def search_shown(
    title: str | None, sentences: Sequence[str], observation: str
) -> list[ShownSentence]:
    """Return what a Search showed: the page's first sentences (none after a miss)."""
    if title is None:
        return []
    return shown_sentences(title, sentences, range(FIRST_SENTENCES), observation)


def lookup_shown(
    title: str | None, sentences: Sequence[str] | None, index: int | None, observation: str
) -> list[ShownSentence]:
    """Return what a Lookup showed: the one matching sentence (none for `No more results.`)."""
    if index is None or not sentences:
        return []
    return shown_sentences(title, sentences, [index], observation)
