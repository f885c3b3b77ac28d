"""Scripts of LATS searches over the test pages (`support.PAGES`), shared by its test modules."""

from __future__ import annotations

from wikireact.models.scripted import ScriptOutput

LESSON = "Guessing without reading was wrong; search both men first."
GUESS_OR_SEARCH = (
    "Thought 1: A guess.\nAction 1: Finish[no]\n\n"
    "Thought 1: Search him first.\nAction 1: Search[Scott Derrickson]"
)
WOOD_OR_YES = (
    "Thought 2: Now Ed Wood.\nAction 2: Search[Ed Wood]\n\n"
    "Thought 2: Both American.\nAction 2: Finish[yes]"
)
SECOND_BRANCH: list[ScriptOutput] = [
    GUESS_OR_SEARCH,
    LESSON,
    "Value: 7\nOn the right page.",
    WOOD_OR_YES,
    "Value: 8",
]
"""Expand the root (a wrong Finish, a Search), reflect on the wrong Finish, value the Search;
then expand the Search (another Search, the right Finish), value that Search, and stop."""
SELF_CHECKED: list[ScriptOutput] = [
    GUESS_OR_SEARCH,
    "Verdict: INCORRECT\nNothing was read.",
    LESSON,
    "Value: 7",
    WOOD_OR_YES,
    "Value: 8",
    "Verdict: CORRECT\nBoth are American.",
]
"""SECOND_BRANCH without a gold answer: the self-check rejects the guess and accepts `yes`."""
