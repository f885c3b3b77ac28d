"""Long episodes: reading, resuming and storing a thread costs the same per step at any length."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from support import MANY_PAGES, distinct_steps, flat, write_script
from typer.testing import CliRunner

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.cli.app import app
from wikireact.context import MAX_STEPS
from wikireact.graph import graph as served_graph
from wikireact.models.call_metadata import CALL_INDEX_KEY
from wikireact.models.scripted import ScriptOutput
from wikireact.prompting.react import build_messages
from wikireact.prompting.small_model import build_messages as small_model_messages
from wikireact.prompting.tools import build_tool_messages
from wikireact.state import SharedDeltaChannel, Step
from wikireact.storage.sqlite.threads import SqliteThreads

WIKI = MemorySource(MANY_PAGES)
CONFIG: RunnableConfig = {"configurable": {"thread_id": "long"}}
runner = CliRunner()


def write_thread(db: Path, steps: int) -> None:
    """Run a `steps`-step episode to its end into `db`, as the CLI saves it."""
    store = SqliteThreads(db)
    graph = build_graph(
        store.saver, model=ScriptedChatModel(outputs=distinct_steps(steps)), wiki=WIKI
    )
    out = graph.invoke(
        {"question": "q"},
        CONFIG,
        context=Context(max_steps=steps, repetition_limit=steps),
        durability="sync",
    )
    assert out["steps"] == steps and out["status"] == "finished"
    store.close()


def cold_read_work(db: Path) -> int:
    """SQLite VM instructions (in hundreds) of one `get_state` from a freshly opened file."""
    store = SqliteThreads(db)
    work = [0]

    def count() -> int:
        work[0] += 1
        return 0

    store.conn.set_progress_handler(count, 100)
    state = build_graph(store.saver, wiki=WIKI).get_state(CONFIG)
    store.conn.set_progress_handler(None, 0)
    store.close()
    assert state.values["status"] == "finished"
    return work[0]


def test_a_cold_read_of_a_long_thread_does_not_walk_its_whole_history(tmp_path: Path) -> None:
    """Reading the latest state walks back to the nearest snapshots only, not to the first step."""
    write_thread(tmp_path / "short.db", 100)
    write_thread(tmp_path / "long.db", 400)
    short, long = cold_read_work(tmp_path / "short.db"), cold_read_work(tmp_path / "long.db")
    assert long < 1.5 * short, (short, long)


def file_bytes(db: Path) -> int:
    """Return the bytes of a checkpoint file's pages in use, its write-ahead log folded in
    (free pages left by the log's timing vary from run to run: they are not counted)."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    used = conn.execute(
        "SELECT (page_count - freelist_count) * page_size "
        "FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()"
    ).fetchone()[0]
    conn.close()
    return int(used)


def test_checkpoint_bytes_per_step_do_not_grow_with_the_episode(tmp_path: Path) -> None:
    """Snapshots of the growing channels store only what is new, not the whole history again."""
    per_step = []
    for steps in (100, 800):
        write_thread(tmp_path / f"{steps}.db", steps)
        per_step.append(file_bytes(tmp_path / f"{steps}.db") / steps)
    # Runs vary by up to ~6% (compressed sizes); before the fix 800 steps cost 1.21x of 100.
    assert per_step[1] < 1.12 * per_step[0], per_step


def test_routers_do_not_rebuild_the_growing_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """A step appends to the trajectory, usage and audit once each: the routers after its nodes
    read what they route on, not copies of those lists rebuilt with the node's writes."""
    rebuilt: dict[str, int] = {}
    copied: list[bool] = []
    update, copy_channel = SharedDeltaChannel.update, SharedDeltaChannel.copy

    def counted_update(channel: SharedDeltaChannel, values: Any) -> bool:
        if values:
            rebuilt[channel.key] = rebuilt.get(channel.key, 0) + 1
        return update(channel, values)

    def checked_copy(channel: SharedDeltaChannel) -> SharedDeltaChannel:
        new = copy_channel(channel)
        copied.append(new.value is channel.value)
        return new

    monkeypatch.setattr(SharedDeltaChannel, "update", counted_update)
    monkeypatch.setattr(SharedDeltaChannel, "copy", checked_copy)
    steps = 12
    graph = build_graph(model=ScriptedChatModel(outputs=distinct_steps(steps)), wiki=WIKI)
    out = graph.invoke({"question": "q"}, context=Context(max_steps=steps))
    assert out["steps"] == steps and len(out["trajectory"]) == steps
    once_a_step = steps + 1  # and once when the episode starts them empty
    assert {key: rebuilt[key] for key in ("trajectory", "usage", "audit")} == {
        "trajectory": once_a_step,
        "usage": once_a_step,
        "audit": once_a_step,
    }
    assert copied and all(copied)  # a conditional edge's copy of a channel shares its value


def test_an_episode_longer_than_langgraphs_default_recursion_limit_runs_to_its_budget() -> None:
    """2,520 steps of 4 supersteps each pass LangGraph's default limit (10,007 supersteps)."""
    steps = 2_520
    outputs: list[ScriptOutput] = [
        "Action: Search[Page 1]",
        *(f"Action: Lookup[word{k}]" for k in range(steps)),
    ]
    graph = build_graph(model=InstantModel(outputs=outputs), wiki=WIKI)
    out = graph.invoke({"question": "q"}, context=Context(max_steps=steps, repetition_limit=3))
    assert out["status"] == "budget_exhausted" and out["steps"] == steps
    assert type(served_graph) is type(graph)  # the graph Studio serves gives runs the same room


class InstantModel(ScriptedChatModel):
    """The scripted model without LangChain's per-call work over the whole prompt (a long
    episode's prompt is long: that work, not the graph's, would make this test slow)."""

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return AIMessage(self.outputs[(config or {})["metadata"][CALL_INDEX_KEY]])


@pytest.mark.parametrize("given", [MAX_STEPS + 1, 10**9])
def test_a_step_budget_past_the_bound_is_refused_in_one_line(
    given: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = f"max_steps must be at most {MAX_STEPS}, got {given}"
    with pytest.raises(ValueError, match=message):
        Context(max_steps=given)
    with pytest.raises(ValueError, match=message):
        build_graph(model=ScriptedChatModel(outputs=["x"]), wiki=WIKI).invoke(
            {"question": "q"}, context={"max_steps": given}
        )
    for args in (
        ["ask", "q", "--model", "local", "--max-steps", str(given)],
        ["eval", str(tmp_path / "none.json"), "--max-steps", str(given)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and message in flat(result.stderr), result.output
        assert len(result.stderr.strip().splitlines()) == 1
    monkeypatch.setenv("WIKIREACT_MAX_STEPS", str(given))
    result = runner.invoke(app, ["ask", "q", "--model", "local"])
    assert result.exit_code == 2 and message in flat(result.stderr), result.output


def test_resume_with_a_budget_past_the_bound_is_refused_in_one_line(
    tmp_path: Path, snapshot_db: Path
) -> None:
    db = tmp_path / "threads.db"
    script = write_script(tmp_path, distinct_steps(3))
    wiki = str(snapshot_db)  # not `offline`: that snapshot needs the offline extra
    ask = ["ask", "q", "--model", script, "--wiki", wiki, "--db", str(db), "--max-steps", "1"]
    first = runner.invoke(app, [*ask, "--thread-id", "b1"])
    assert "budget of 1 step" in flat(first.stdout), first.output
    result = runner.invoke(app, ["resume", "b1", "--db", str(db), "--max-steps", "9999"])
    assert result.exit_code == 2
    assert f"max_steps must be at most {MAX_STEPS}, got 9999" in flat(result.stderr)


@pytest.mark.parametrize("build", [build_messages, build_tool_messages, small_model_messages])
def test_a_prompt_is_built_from_its_own_history_after_an_edit_or_fork(build: Any) -> None:
    """Prompts extend the last one built for the episode only when the history continues it."""
    steps = [
        Step(
            kind="executed",
            thought=f"t{k}",
            action=f"Lookup[w{k}]",
            observation=f"o{k}",
            raw=f"Thought: t{k}\nAction: Lookup[w{k}]",
        )
        for k in range(6)
    ]

    def fresh(history: list[Step]) -> Any:  # new step objects: nothing to extend
        return build("q", copy.deepcopy(history), "react")

    steps[4] = Step(**{**steps[1], "kind": "repeat", "observation": "(repeated)"})
    forked = [*steps[:2], Step(**{**steps[2], "observation": "edited"}), *steps[3:]]
    # the small model's prompt shows a repeat with the result of the step it repeats
    repeated_edited = [steps[0], Step(**{**steps[1], "observation": "edited"}), *steps[2:]]
    for history in (steps[:3], steps[:5], forked, steps[:2], steps, steps[:4], repeated_edited):
        assert build("q", history, "react") == fresh(history)
