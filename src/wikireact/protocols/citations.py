"""What the evidence keeps: the sentences a step showed, and the sentences an answer cites.

Plain `TypedDict`s (they go into checkpoints: no new classes for the serializer to allow).
"""

from __future__ import annotations

from typing_extensions import TypedDict


class ShownSentence(TypedDict):
    """One sentence an observation showed, as the environment held it."""

    title: str | None
    """The page it belongs to (None: not known, e.g. a step recorded before titles were kept)."""
    sentence_index: int | None
    """Its index among the page's own sentences (a HotpotQA snapshot keeps the dataset's split)."""
    sentence: str
    """The sentence as the model saw it."""


class Citation(TypedDict):
    """A sentence an answer rests on: which step showed it, where it is, and the span cited."""

    step: int
    """The step (1-based, in the output's trajectory) whose observation showed it."""
    title: str | None
    sentence_index: int | None
    sentence: str
    start: int
    """Start of the cited span in `sentence` (characters)."""
    end: int
    """End of the cited span (exclusive)."""
