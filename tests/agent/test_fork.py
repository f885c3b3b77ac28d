"""`fork`: replace one step's action, as if the model had written it, and continue from there."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import GOOD_RUN, PAGES, QUESTION, TOOLS_RUN, SpyModel, thread

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import ConfigurationError
from wikireact.fork import fork
from wikireact.models.scripted import ScriptOutput

LOUVRE = "The Louvre is the world's most-visited art museum. It is in Paris."
WIKI = {**PAGES, "Louvre": LOUVRE}
TWICE: list[ScriptOutput] = [
    "Thought 1: Ed Wood first.\nAction 1: Search[Ed Wood]",
    "Thought 2: Ed Wood again.\nAction 2: Search[Ed Wood]",
    "Thought 3: done.\nAction 3: Finish[American]",
]


def test_forking_a_search_recomputes_what_parse_derives(checkpointer: BaseCheckpointSaver) -> None:
    graph = build_graph(
        checkpointer, model=ScriptedChatModel(outputs=TWICE), wiki=MemorySource(WIKI)
    )
    original = graph.invoke({"question": QUESTION}, thread())
    assert [s["kind"] for s in original["trajectory"]] == ["executed", "repeat", "finish"]
    forked = fork(graph, thread(), step=1, action="Search[Louvre]", thought="The museum first.")
    out = graph.invoke(None, forked)
    first, second = out["trajectory"][:2]
    assert (first["kind"], first["action"], first["thought"]) == (
        "executed",
        "Search[Louvre]",
        "The museum first.",
    )
    assert first["observation"].startswith("The Louvre is")
    assert (second["kind"], second["action"]) == ("executed", "Search[Ed Wood]")  # not a repeat
    assert second["observation"].startswith("Edward Davis Wood Jr.")
    assert out["answer"] == "American" and out["audit"][0]["action"] == {
        "verb": "Search",
        "arguments": {"title": "Louvre"},
    }
    assert graph.get_state(forked).values["steps"] == 0  # the fork starts before step 1
    history = list(graph.get_state_history(thread()))
    assert any(s.values.get("trajectory") == original["trajectory"] for s in history)


def test_forking_a_finish_continues_the_episode() -> None:
    model = ScriptedChatModel(outputs=[*GOOD_RUN, "Thought 5: enough.\nAction 5: Finish[no]"])
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(WIKI))
    assert graph.invoke({"question": QUESTION}, thread())["answer"] == "yes"
    out = graph.invoke(None, fork(graph, thread(), action="Search[Louvre]"))  # the last step
    fourth = out["trajectory"][3]
    assert (fourth["kind"], fourth["action"]) == ("executed", "Search[Louvre]")
    assert fourth["thought"] == "Both are American."  # the step's own thought is kept
    assert out["steps"] == 5 and out["answer"] == "no" and out["status"] == "finished"


def test_forking_the_step_waiting_for_approval() -> None:
    graph = build_graph(
        InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=MemorySource(WIKI)
    )
    paused = graph.invoke({"question": QUESTION}, thread(), context=Context(approve=True))
    assert paused["__interrupt__"]
    out = graph.invoke(None, fork(graph, thread(), action="Search[Louvre]"))
    assert out["__interrupt__"][0].value["proposed_action"] == "Search[Louvre]"  # still gated
    out = graph.invoke(Command(resume=True), thread())
    assert out["trajectory"][0]["observation"].startswith("The Louvre is")


def test_forking_a_tool_call_rewrites_the_call_the_model_sees_next() -> None:
    model = SpyModel(outputs=TOOLS_RUN)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(WIKI))
    graph.invoke({"question": QUESTION}, thread(), context={"protocol": "tools"})
    out = graph.invoke(None, fork(graph, thread(), step=2, action="Search[Louvre]"))
    assert out["trajectory"][1]["action"] == "Search[Louvre]"
    seen = model.calls[-2]  # the call for step 3, after the forked step 2
    calls = [c for m in seen for c in getattr(m, "tool_calls", [])]
    assert calls[-1]["name"] == "search" and calls[-1]["args"] == {"title": "Louvre"}
    assert "The Louvre is" in str(seen[-1].content)


def test_a_fork_with_an_invalid_action_is_refused() -> None:
    graph = build_graph(
        InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=MemorySource(WIKI)
    )
    graph.invoke({"question": QUESTION}, thread())
    with pytest.raises(ConfigurationError, match="Serch"):
        fork(graph, thread(), action="Serch[Louvre]")
    with pytest.raises(ConfigurationError, match="no step 9"):
        fork(graph, thread(), step=9, action="Search[Louvre]")
    with pytest.raises(ConfigurationError, match="no checkpoint"):
        fork(graph, thread("nothing-here"), action="Search[Louvre]")
