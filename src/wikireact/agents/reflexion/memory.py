"""Lessons in LangGraph's long-term store, one namespace per question.

The namespace is `("wikireact", "reflexion", KEY)`, KEY a digest of the question as the
evaluator sees it (case and spacing do not matter), since a store's namespace labels may
not hold periods. An item is one lesson: `{"question", "lesson", "trial", "answer",
"verdict"}` under the key `THREAD:TRIAL`, so writing it again after a resume replaces it
instead of adding a copy.
"""

from __future__ import annotations

import hashlib

from langgraph.store.base import BaseStore

from wikireact.agents.reflexion.state import Trial

NAMESPACE = ("wikireact", "reflexion")
KEPT_LESSONS = 100
"""The most lessons read back for one question (the prompt shows the latest few)."""


def question_namespace(question: str) -> tuple[str, ...]:
    """Return the store namespace of `question`'s lessons."""
    digest = hashlib.sha256(" ".join(question.casefold().split()).encode()).hexdigest()
    return (*NAMESPACE, digest[:32])


def read_lessons(store: BaseStore, question: str) -> list[str]:
    """Return the lessons kept for `question`, oldest first."""
    items = store.search(question_namespace(question), limit=KEPT_LESSONS)
    items.sort(key=lambda item: (item.created_at, item.key))
    return [str(item.value["lesson"]) for item in items if item.value.get("lesson")]


def keep_lesson(store: BaseStore, question: str, trial: Trial, run: str) -> None:
    """Store `trial`'s lesson under `question` (key `run:number`: a repeat replaces it)."""
    store.put(
        question_namespace(question),
        f"{run}:{trial['number']}",
        {
            "question": question,
            "lesson": trial["reflection"],
            "trial": trial["number"],
            "answer": trial["answer"],
            "verdict": trial["verdict"],
        },
        index=False,
    )
