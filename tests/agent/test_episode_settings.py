"""Settings are kept with the episode: a resume without context uses them; changes are applied or refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import GOOD_RUN, QUESTION, TOOLS_RUN, SpyModel, thread, write_script

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import ConfigurationError
from wikireact.models.scripted import ScriptOutput

LOOKUPS: list[ScriptOutput] = [
    "Thought: look.\nAction: Search[Ed Wood]",
    *[f"Thought: more.\nAction: Lookup[word{i}]" for i in range(12)],
]


def test_a_resume_without_context_keeps_the_approval_gate(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    graph = build_graph(checkpointer, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread(), context=Context(approve=True))
    out = graph.invoke(Command(resume={"approve": True, "by": "ann"}), thread())  # no context
    assert out["__interrupt__"][0].value["proposed_action"] == "Search[Ed Wood]"  # still gated
    assert out["audit"][0]["approval"] == {
        "decision": "approved",
        "by": "ann",
        "original_action": None,
        "note": None,
    }


def test_a_resume_elsewhere_ignores_the_new_environment(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = build_graph(checkpointer, model=ScriptedChatModel(outputs=LOOKUPS), wiki=wiki)
    start.invoke({"question": QUESTION}, thread(), context={"max_steps": 3, "approve": True})
    monkeypatch.setenv("WIKIREACT_MAX_STEPS", "10")
    monkeypatch.setenv("WIKIREACT_APPROVE", "0")
    later = build_graph(checkpointer, model=ScriptedChatModel(outputs=LOOKUPS), wiki=wiki)
    out = later.invoke(Command(resume=True), thread())
    assert out["__interrupt__"] and out["steps"] == 1  # approval kept: step 2 waits
    assert later.get_state(thread()).values["context"]["max_steps"] == 3


def test_a_larger_budget_on_resume_is_applied(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=LOOKUPS), wiki=wiki)
    first = graph.invoke({"question": QUESTION}, thread(), context=Context(max_steps=3))
    assert first["status"] == "budget_exhausted" and first["steps"] == 3
    out = graph.invoke(None, thread(), context={"max_steps": 5})
    assert out["status"] == "budget_exhausted" and out["steps"] == 5
    assert graph.get_state(thread()).values["context"]["max_steps"] == 5


def test_turning_approval_off_approves_the_waiting_step(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread(), context=Context(approve=True))
    out = graph.invoke(None, thread(), context={"approve": False})
    assert "__interrupt__" not in out and out["answer"] == "yes"
    decisions = [r["approval"] and r["approval"]["decision"] for r in out["audit"]]
    assert decisions == ["approved", None, None, None]


def test_turning_approval_on_gates_the_step_in_progress(wiki: MemorySource) -> None:
    graph = build_graph(
        InMemorySaver(),
        model=ScriptedChatModel(outputs=GOOD_RUN),
        wiki=wiki,
        interrupt_before=["act"],
    )
    graph.invoke({"question": QUESTION}, thread())  # stopped before act, approval off
    out = graph.invoke(None, thread(), context={"approve": True})
    assert out["__interrupt__"][0].value["proposed_action"] == "Search[Scott Derrickson]"


def test_a_decision_given_while_turning_approval_off_is_kept(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread(), context=Context(approve=True))
    out = graph.invoke(Command(resume={"reject": "no"}), thread(), context={"approve": False})
    assert out["trajectory"][0]["kind"] == "rejected" and out["answer"] == "yes"
    assert [r["approval"] is None for r in out["audit"]] == [False, True, True, True]


def test_resume_no_approve_in_the_cli_runs_the_waiting_step(
    tmp_path: Path, snapshot_db: Path, data_dir: Path
) -> None:
    script = write_script(tmp_path, GOOD_RUN)
    ask = [QUESTION, "--approve", "--model", script, "--wiki", str(snapshot_db)]
    run = [sys.executable, "-m", "wikireact"]
    subprocess.run([*run, "ask", *ask, "--thread-id", "ap"], input="", text=True, timeout=60)
    resumed = subprocess.run(
        [*run, "resume", "ap", "--no-approve", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "yes"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("protocol", "tools"),
        ("method", "act"),
        ("task", "fever"),
        ("repetition_limit", 5),
        ("observation_cap", 80),
    ],
)
def test_settings_that_define_the_episode_cannot_change(
    field: str, value: Any, wiki: MemorySource
) -> None:
    model = SpyModel(outputs=GOOD_RUN)
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    graph.invoke({"question": QUESTION}, thread(), context=Context(approve=True))
    with pytest.raises(ConfigurationError, match=f"{field} cannot change"):
        graph.invoke(Command(resume=True), thread(), context={field: value})
    assert graph.get_state(thread()).next == ("act",) and len(model.calls) == 1


def test_a_context_object_changes_only_the_fields_it_was_given(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=TOOLS_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread(), context=Context(protocol="tools", approve=True))
    out = graph.invoke(Command(resume=True), thread(), context=Context(approve=False))
    assert out["answer"] == "yes" and out["audit"][1]["protocol"] == "tools"
