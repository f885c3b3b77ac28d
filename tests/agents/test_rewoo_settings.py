"""ReWOO refuses the tools protocol in one line, at every entry, before anything is recorded.

Its plan, LLM steps and answer are text; `ask`, `resume`, `eval`, the library's graph and
the served graph all refuse `protocol="tools"` alike (it used to be accepted and recorded
by `ask` while `eval` refused it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from support import PAGES, QUESTION, SpyModel, flat, thread, write_script
from typer.testing import CliRunner

from wikireact import MemorySource
from wikireact.agents.rewoo.graph import build_graph
from wikireact.agents.rewoo.graph import graph as served_graph
from wikireact.agents.rewoo.settings import TOOLS_REFUSED
from wikireact.cli.app import app
from wikireact.context import Context
from wikireact.errors import ConfigurationError
from wikireact.models.scripted import ScriptOutput
from wikireact.storage.threads import open_threads

runner = CliRunner()
PLAN = "Plan: look.\n#E1 = Search[Scott Derrickson]\nPlan: and.\n#E2 = Search[Ed Wood]"
RUN: list[ScriptOutput] = [PLAN, "Thought: both American.\nFinish[yes]"]


def test_graph_invoke_refuses_tools_at_the_door_and_records_nothing() -> None:
    model = SpyModel(outputs=RUN)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    config = thread("tools")
    with pytest.raises(ConfigurationError) as refused:
        graph.invoke({"question": QUESTION}, config, context={"protocol": "tools"})
    assert str(refused.value) == TOOLS_REFUSED and "\n" not in TOOLS_REFUSED
    assert not model.calls and not graph.get_state(config).values
    # the thread is free for the same question with the text protocol
    done = graph.invoke({"question": QUESTION}, config, context={"protocol": "text"})
    assert done["status"] == "finished"


def test_the_served_graph_refuses_tools(tmp_path: Path) -> None:
    context = {"protocol": "tools", "model": write_script(tmp_path, RUN), "wiki": "memory"}
    with pytest.raises(ConfigurationError, match="protocol tools does not apply to the rewoo"):
        served_graph.invoke({"question": QUESTION}, context=context)


def test_a_text_thread_continues_whatever_the_environment_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = SpyModel(outputs=RUN)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    config = thread("env")
    graph.invoke({"question": QUESTION}, {**config, "recursion_limit": 5})
    monkeypatch.setenv("WIKIREACT_PROTOCOL", "tools")  # the thread keeps its own protocol
    assert graph.invoke(None, config)["status"] == "finished"
    with pytest.raises(ConfigurationError, match="protocol tools does not apply"):
        graph.invoke({"question": QUESTION}, thread("new"))  # a new one takes the default


def test_cli_ask_refuses_tools_and_keeps_no_thread(tmp_path: Path, snapshot_db: Path) -> None:
    args = ["ask", QUESTION, "--agent", "rewoo", "--thread-id", "rw", "--wiki", str(snapshot_db)]
    args += ["--model", write_script(tmp_path, RUN)]
    refused = runner.invoke(app, [*args, "--protocol", "tools"])
    assert refused.exit_code == 2
    assert flat(refused.output) == f"error: {TOOLS_REFUSED}"
    assert runner.invoke(app, ["history", "rw"]).exit_code != 0, "the refused thread was kept"
    again = runner.invoke(app, [*args, "--json"])
    assert again.exit_code == 0, again.output


def test_cli_resume_refuses_a_thread_recorded_with_tools(snapshot_db: Path, data_dir: Path) -> None:
    store = open_threads(None)
    try:  # a thread an older wikireact recorded with the tools protocol
        context = Context(model="scripted", wiki=str(snapshot_db), protocol="tools")
        store.register("old", QUESTION, context, agent="rewoo")
    finally:
        store.close()
    resumed = runner.invoke(app, ["resume", "old"])
    assert resumed.exit_code == 2
    assert flat(resumed.output) == f"error: {TOOLS_REFUSED}"


def test_cli_eval_refuses_rewoo_with_tools(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    script = write_script(tmp_path, RUN)
    args = ["eval", str(dataset), "--method", "rewoo", "--protocol", "tools", "--model", script]
    result = runner.invoke(app, [*args, "--wiki", str(snapshot), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "--protocol tools applies to methods that run episodes" in flat(result.output)
    assert "\n" not in result.output.strip()
    assert not (tmp_path / "o" / "trajectories.jsonl").exists()
