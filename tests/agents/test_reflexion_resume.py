"""Reflexion's trials are checkpointed inside: a crash or an approval pause resumes within the trial."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command, StateSnapshot
from reflexion_scripts import LESSON, RIGHT_RUN, WRONG_GUESS
from support import PAGES, QUESTION, SpyModel, thread

from wikireact import MemorySource
from wikireact.agents.reflexion.graph import build_graph
from wikireact.errors import ModelCallError
from wikireact.models.scripted import ScriptOutput
from wikireact.storage.sqlite.threads import SqliteThreads

SCRIPT: list[ScriptOutput] = [WRONG_GUESS, LESSON, *RIGHT_RUN]
INPUT = {"question": QUESTION, "gold_answer": "yes", "memory": "off"}


def summary(out: dict[str, Any]) -> dict[str, Any]:
    """What a run produced, times aside."""
    return {
        "answer": out["answer"],
        "status": out["status"],
        "steps": out["steps"],
        "model_calls": out["model_calls"],
        "trajectory": out["trajectory"],
        "trials": [
            {k: t[k] for k in ("answer", "verdict", "reflection", "lessons")} for t in out["trials"]
        ],
        "usage": out["usage"],
    }


def test_a_crash_inside_the_second_trial_resumes_there(tmp_path: Path) -> None:
    reference = build_graph(model=SpyModel(outputs=SCRIPT), wiki=MemorySource(PAGES))
    expected = summary(reference.invoke(INPUT))

    threads = SqliteThreads(tmp_path / "t.db")
    try:
        model = SpyModel(outputs=SCRIPT, errors={3: ConnectionError("model down")})
        graph = build_graph(threads.saver, model=model, wiki=MemorySource(PAGES))
        with pytest.raises(ModelCallError):
            graph.invoke(INPUT, thread("c"))
        # the crash was at the second step of trial 2: its first step is saved in the trial
        state = graph.get_state(thread("c"), subgraphs=True)
        assert state.next == ("trial",)
        (task,) = state.tasks
        assert isinstance(task.state, StateSnapshot) and task.state.values["steps"] == 1
        model.errors.clear()
        before = len(model.calls)
        out = graph.invoke(None, thread("c"))
        assert summary(out) == expected
        # only the failed call and the rest ran again: no step of trial 1 or 2 was repeated
        assert len(model.calls) - before == 2
    finally:
        threads.close()


def test_approval_pauses_inside_a_trial_and_resumes(tmp_path: Path) -> None:
    threads = SqliteThreads(tmp_path / "t.db")
    try:
        model = SpyModel(outputs=SCRIPT)
        graph = build_graph(threads.saver, model=model, wiki=MemorySource(PAGES))
        out = graph.invoke(INPUT, thread("a"), context={"approve": True})
        decisions = 0
        while out.get("__interrupt__"):
            (pending,) = out["__interrupt__"]
            assert pending.value["proposed_action"].startswith("Search[")
            assert pending.value["checkpoint_ns"].startswith("trial:")
            out = graph.invoke(Command(resume={"approve": True, "by": "ann"}), thread("a"))
            decisions += 1
        assert decisions == 2 and out["answer"] == "yes"
        approvals = [r["approval"] for r in out["audit"] if r["kind"] == "executed"]
        assert [a["by"] for a in approvals if a] == ["ann", "ann"]
        assert len(model.calls) == 5  # each paused step's model call ran once
    finally:
        threads.close()
