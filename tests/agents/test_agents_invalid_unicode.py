"""A question holding a lone surrogate runs on every agent, repaired where it enters.

The door of every agent reads the question once (`validate_question`: a lone surrogate
becomes U+FFFD) and the episode starts with it as read: the checkpoint, every prompt sent
to the model, the output and Reflexion's long-term store (whose namespace is a digest of
the question) all hold valid text. Through `graph.invoke` and through `wikireact ask`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pe_scripts import WHOLE_RUN
from reflexion_scripts import LESSON, WANDER
from support import GOOD_RUN, PAGES, SpyModel, thread, write_script
from typer.testing import CliRunner

from wikireact import Context, MemorySource
from wikireact.agents import load_agent
from wikireact.agents.reflexion.memory import read_lessons
from wikireact.cli.app import app
from wikireact.models.scripted import ScriptOutput
from wikireact.storage.long_term import open_store
from wikireact.storage.sqlite.threads import SqliteThreads

RAW = "Were Scott Derrickson and Ed Wood of the same nationality\udcff?"
READ = "Were Scott Derrickson and Ed Wood of the same nationality\ufffd?"
REWOO_RUN: list[ScriptOutput] = [
    "Plan: Find both.\n#E1 = Search[Scott Derrickson]\nPlan: Wood.\n#E2 = Search[Ed Wood]",
    "Thought: both are American.\nFinish[yes]",
]
REFLEXION_RUN: list[ScriptOutput] = [WANDER, LESSON, "Thought 1: American.\nAction 1: Finish[yes]"]
"""Trial 1 runs out of its one step, a lesson is kept in the store, trial 2 answers."""
SCRIPTS: dict[str, list[ScriptOutput]] = {
    "react": GOOD_RUN,
    "rewoo": REWOO_RUN,
    "plan-execute": WHOLE_RUN,
    "reflexion": REFLEXION_RUN,
}
STEPS = {"reflexion": 1}
"""Each agent's step budget (default: 7); Reflexion's first trial must fail."""


def encodable(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize("agent", list(SCRIPTS))
def test_graph_invoke_repairs_the_question_for_every_agent(agent: str, tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    threads = SqliteThreads(db)
    model = SpyModel(outputs=SCRIPTS[agent])
    build: Callable[..., Any] = load_agent(agent).build_graph
    with open_store(db) as store:
        extra = {"store": store} if agent == "reflexion" else {}
        graph = build(threads.saver, model=model, wiki=MemorySource(PAGES), **extra)
        context = Context(max_steps=STEPS.get(agent, 7))
        out = graph.invoke({"question": RAW}, thread(), context=context)
        assert out["answer"] == "yes" and encodable(out)
        assert graph.get_state(thread()).values["question"] == READ
        assert all(encodable(texts) for texts in model.texts)  # what a model server is sent
        if agent == "reflexion":
            assert read_lessons(store, READ) == [LESSON]
        # the thread continues with either form of its question
        assert graph.invoke({"question": RAW}, thread(), context=context)["answer"] == "yes"
    threads.close()


@pytest.mark.parametrize("agent", list(SCRIPTS))
def test_ask_repairs_the_question_for_every_agent(
    agent: str, tmp_path: Path, snapshot_db: Path
) -> None:
    args = ["ask", RAW, "--agent", agent, "--json", "--thread-id", "u"]
    args += ["--model", write_script(tmp_path, SCRIPTS[agent]), "--wiki", str(snapshot_db)]
    args += ["--db", str(tmp_path / "threads.db"), "--max-steps", str(STEPS.get(agent, 7))]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["answer"] == "yes"
    history = CliRunner().invoke(
        app, ["history", "u", "--json", "--db", str(tmp_path / "threads.db")]
    )
    assert history.exit_code == 0, history.output
    if agent == "reflexion":
        with open_store(tmp_path / "threads.db") as store:
            assert read_lessons(store, READ) == [LESSON]
