"""Scripted model outputs and prompt readers shared by the Reflexion tests."""

from __future__ import annotations

from langchain_core.messages import BaseMessage
from support import QUESTION

from wikireact.models.scripted import ScriptOutput
from wikireact.prompting.lessons import LESSONS_HEADER

WRONG_GUESS = "Thought 1: I guess they differ.\nAction 1: Finish[no]"
LESSON = "I answered without searching. Search both people and compare their nationalities."
RIGHT_RUN: list[ScriptOutput] = [
    "Thought 1: I need Scott Derrickson's nationality.\nAction 1: Search[Scott Derrickson]",
    "Thought 2: He is American. Now Ed Wood.\nAction 2: Search[Ed Wood]",
    "Thought 3: Both are American.\nAction 3: Finish[yes]",
]
WANDER = "Thought 1: Let me look.\nAction 1: Search[Scott Derrickson]"
"""A step that never finishes (with max_steps=1 the trial ends budget_exhausted)."""


def human_texts(messages: list[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages if m.type == "human"]


def lesson_turn(messages: list[BaseMessage]) -> str | None:
    """The lessons turn of a ReAct prompt: right before the episode's question turn, or None."""
    texts = human_texts(messages)
    question_at = max(i for i, t in enumerate(texts) if t == f"Question: {QUESTION}")
    before = texts[question_at - 1] if question_at else ""
    return before if before.startswith(LESSONS_HEADER) else None
