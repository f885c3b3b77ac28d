"""Reflexion's lessons in LangGraph's long-term store: found by a later run on the same question.

The store is the one `--db` names (`wikireact.storage.long_term.open_store`): a SQLite file
or a real PostgreSQL database (`db_target`), each reopened between the two runs, as two
processes would.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from reflexion_scripts import LESSON, RIGHT_RUN, WANDER, WRONG_GUESS, lesson_turn
from support import PAGES, QUESTION, SpyModel, thread

from wikireact import MemorySource
from wikireact.agents.reflexion.graph import build_graph
from wikireact.agents.reflexion.memory import question_namespace, read_lessons
from wikireact.storage.long_term import open_store
from wikireact.storage.threads import is_postgres_url, open_threads


def run_on(
    db: str, model: SpyModel, thread_id: str, question: str = QUESTION, **inputs: Any
) -> dict[str, Any]:
    """One run in fresh connections to `db` (threads and store), closed afterwards."""
    threads = open_threads(db)
    try:
        with open_store(db) as store:
            graph = build_graph(threads.saver, model=model, wiki=MemorySource(PAGES), store=store)
            return dict(graph.invoke({"question": question, **inputs}, thread(thread_id)))
    finally:
        threads.close()


def test_a_later_run_starts_with_the_lesson_from_the_store(db_target: str) -> None:
    first = SpyModel(outputs=[WRONG_GUESS, LESSON])
    out = run_on(db_target, first, "first", gold_answer="yes", max_trials=1)
    # one trial, failed; its lesson is written for later runs although no trial is left
    assert out["trials"][0]["reflection"] == LESSON and out["answer"] == "no"

    later = SpyModel(outputs=RIGHT_RUN)
    spaced = "  were scott derrickson and ed wood of the same  nationality?"
    out = run_on(db_target, later, "later", question=QUESTION, gold_answer="yes")
    assert out["trials"][0]["lessons"] == [LESSON]
    shown = lesson_turn(later.calls[0])
    assert shown is not None and LESSON in shown
    assert (out["answer"], out["trials"][0]["verdict"]) == ("yes", "correct")
    with open_store(db_target) as store:
        assert read_lessons(store, spaced) == [LESSON]  # case and spacing do not matter
    if not is_postgres_url(db_target):  # the lessons live in the threads' own file
        tables = {
            r[0] for r in sqlite3.connect(db_target).execute("SELECT name FROM sqlite_master")
        }
        assert {"store", "wikireact_threads"} <= tables


def test_memory_off_neither_reads_nor_writes_the_store(tmp_path: Path) -> None:
    db = str(tmp_path / "threads.db")
    with open_store(db) as store:
        store.put(question_namespace(QUESTION), "old:1", {"lesson": "An old lesson."})
    model = SpyModel(outputs=[WRONG_GUESS, LESSON, *RIGHT_RUN])
    out = run_on(db, model, "off", gold_answer="yes", memory="off")

    assert [t["lessons"] for t in out["trials"]] == [[], [LESSON]]
    assert lesson_turn(model.calls[0]) is None
    with open_store(db) as store:
        assert read_lessons(store, QUESTION) == ["An old lesson."]


def test_memory_question_is_the_default_with_a_store_and_lessons_accumulate() -> None:
    store: BaseStore = InMemoryStore()

    def once(thread_id: str, outputs: list[Any]) -> dict[str, Any]:
        model = SpyModel(outputs=outputs)
        graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES), store=store)
        inputs = {"question": QUESTION, "max_trials": 1}
        return dict(graph.invoke(inputs, thread(thread_id), context={"max_steps": 1}))

    once("a", [WANDER, "Lesson A."])
    once("b", [WANDER, "Lesson B."])
    out = once("c", [RIGHT_RUN[-1]])
    assert out["trials"][0]["lessons"] == ["Lesson A.", "Lesson B."]
    assert out["answer"] == "yes"
    assert read_lessons(store, QUESTION) == ["Lesson A.", "Lesson B."]  # a passed trial adds none
