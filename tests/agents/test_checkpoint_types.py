"""Every agent's checkpoints hold only types the strict serializer allows (issue 34 item 1).

Each agent runs a whole episode on wikireact's SQLite saver; then every stored checkpoint and
write of every namespace is read back (`saver.list(None)`), recording each type an EXT
record names. All of them are allowed, wikireact's own are exactly `WIKIREACT_TYPES`, and
LangGraph logs no warning about a type (unregistered or blocked) on the way.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pe_scripts import WHOLE_RUN
from reflexion_scripts import LESSON, RIGHT_RUN, WRONG_GUESS
from support import GOOD_RUN, PAGES, QUESTION, thread

from wikireact import Context, MemorySource, ScriptedChatModel
from wikireact.agents import load_agent
from wikireact.storage import serde
from wikireact.storage.sqlite.threads import SqliteThreads

REWOO_PLAN = "Plan: his page.\n#E1 = Search[Scott Derrickson]\nPlan: Wood's.\n#E2 = Search[Ed Wood]"
EPISODES: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "react": (GOOD_RUN, {}),
    "rewoo": ([REWOO_PLAN, "Both are American.\nFinish[yes]"], {}),
    "plan-execute": (WHOLE_RUN, {}),
    "reflexion": ([WRONG_GUESS, LESSON, *RIGHT_RUN], {"gold_answer": "yes", "memory": "off"}),
}


@pytest.mark.parametrize("agent", sorted(EPISODES))
def test_an_episode_stores_only_allowed_types_and_reads_back_quietly(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    named: set[str] = set()

    def recording(code: int, record: Any) -> tuple[str, bool]:
        name, allowed = original(code, record)
        named.add(name)
        return name, allowed

    original = serde._named_type
    monkeypatch.setattr(serde, "_named_type", recording)
    outputs, inputs = EPISODES[agent]
    threads = SqliteThreads(tmp_path / "threads.db")
    graph = load_agent(agent).build_graph(
        threads.saver, model=ScriptedChatModel(outputs=outputs), wiki=MemorySource(PAGES)
    )
    with caplog.at_level(logging.WARNING, logger="langgraph"):
        out = graph.invoke({"question": QUESTION, **inputs}, thread("a"), context=Context())
        assert out["status"] == "finished"
        paused = load_agent("react").build_graph(
            threads.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=MemorySource(PAGES)
        )
        paused.invoke({"question": QUESTION}, thread("p"), context=Context(approve=True))
        stored = list(threads.saver.list(None))
    threads.close()
    assert len(stored) > 10
    allowed = {f"{module}.{name}" for module, name in serde.ALLOWED_TYPES}
    assert named <= allowed and "langgraph.types.Interrupt" in named  # the approval pause
    own = {f"{module}.{name}" for module, name in serde.WIKIREACT_TYPES}
    assert {n for n in named if n.startswith("wikireact")} == own
    assert not [r.getMessage() for r in caplog.records if "serde" in r.name], caplog.text
