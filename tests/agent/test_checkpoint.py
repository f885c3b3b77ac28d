"""Pause and resume: interrupts, exceptions, new processes, time travel and forks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)
from support import GOOD_RUN, QUESTION, thread

from wikireact import MemorySource, ScriptedChatModel, build_graph

HERE = Path(__file__).resolve().parents[1]  # tests/, where the worker scripts are


def test_interrupt_before_act_then_resume_matches_uninterrupted(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    reference = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki).invoke(
        {"question": QUESTION}
    )
    graph = build_graph(
        checkpointer, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki, interrupt_before=["act"]
    )
    graph.invoke({"question": QUESTION}, thread())
    pauses = 1
    while graph.get_state(thread()).next:
        state = graph.get_state(thread())
        assert state.next == ("act",)
        assert state.values["current"]["action"]["name"] in ("Search", "Lookup")
        graph.invoke(None, thread())
        pauses += 1
    final = graph.get_state(thread()).values
    assert pauses == 4  # paused before each of the 3 Search/Lookup actions
    assert final["trajectory"] == reference["trajectory"]
    assert final["answer"] == "yes"
    assert wiki.requests == 4  # 2 for the reference run, 2 here: nothing executed twice


def test_exception_mid_episode_resumes_without_losing_or_repeating(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    model = ScriptedChatModel(outputs=GOOD_RUN, errors={2: TimeoutError("model timed out")})
    graph = build_graph(checkpointer, model=model, wiki=wiki)
    with pytest.raises(Exception, match="did not answer step 3"):
        graph.invoke({"question": QUESTION}, thread())
    assert graph.get_state(thread()).values["steps"] == 2
    model.errors.clear()  # the model is back
    out = graph.invoke(None, thread())
    assert out["answer"] == "yes"
    assert [s["action"] for s in out["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]
    assert wiki.requests == 2


def _worker(db: str | Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HERE / "episode_worker.py"), str(db), "q1", mode],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=HERE,
    )


def test_pause_in_one_process_resume_in_another(tmp_path: Path, db_target: str) -> None:
    db = db_target
    first = _worker(db, "start")
    assert first.returncode == 3, first.stderr
    while (step := _worker(db, "resume")).returncode == 3:
        pass
    assert step.returncode == 0, step.stderr
    resumed = json.loads(step.stdout)
    fresh = json.loads(_worker(tmp_path / "fresh.db", "fresh").stdout)
    assert resumed["trajectory"] == fresh["trajectory"]
    assert resumed["answer"] == fresh["answer"] == "yes"
    assert resumed["steps"] == 4


def test_time_travel_replays_from_an_earlier_checkpoint(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    graph = build_graph(checkpointer, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread())
    history = list(graph.get_state_history(thread()))
    after_step_2 = next(s for s in history if s.values.get("steps") == 2 and s.next == ("reason",))
    out = graph.invoke(None, after_step_2.config)
    assert out["steps"] == 4 and out["answer"] == "yes"
    assert out["trajectory"][2]["action"] == "Lookup[born]"


def test_fork_with_an_edited_action(checkpointer: BaseCheckpointSaver, wiki: MemorySource) -> None:
    graph = build_graph(checkpointer, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread())
    history = list(graph.get_state_history(thread()))
    before_act_2 = next(s for s in history if s.values.get("steps") == 1 and s.next == ("act",))
    forked = graph.update_state(
        before_act_2.config,
        {
            "current": {
                "action": {"name": "Search", "argument": "Edward D. Wood Jr."},
                "action_text": "Search[Edward D. Wood Jr.]",
            }
        },
        as_node="parse",
    )
    out = graph.invoke(None, forked)
    assert out["trajectory"][1]["action"] == "Search[Edward D. Wood Jr.]"
    assert out["trajectory"][1]["observation"].startswith("Edward Davis Wood Jr.")
    assert out["answer"] == "yes"
    # the original branch is untouched
    assert graph.get_state(before_act_2.config).values["steps"] == 1


def test_crash_between_saved_writes_and_next_checkpoint(tmp_path: Path, wiki: MemorySource) -> None:
    """`next` is empty then, yet the episode still runs: resume on status, not on `next`."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from wikireact.state import episode_ended

    class Crash(BaseException):
        pass

    class CrashingSaver(SqliteSaver):
        def put(
            self,
            config: RunnableConfig,
            checkpoint: Checkpoint,
            metadata: CheckpointMetadata,
            new_versions: ChannelVersions,
        ) -> RunnableConfig:
            if metadata.get("step") == 8:  # the checkpoint after step 2's `observe`
                raise Crash()
            return super().put(config, checkpoint, metadata, new_versions)

    db = tmp_path / "c.db"
    graph = build_graph(
        CrashingSaver(sqlite3.connect(db, check_same_thread=False)),
        model=ScriptedChatModel(outputs=GOOD_RUN),
        wiki=wiki,
    )
    with pytest.raises(Crash):
        graph.invoke({"question": QUESTION}, thread(), durability="sync")
    fresh = build_graph(
        SqliteSaver(sqlite3.connect(db, check_same_thread=False)),
        model=ScriptedChatModel(outputs=GOOD_RUN),
        wiki=wiki,
    )
    state = fresh.get_state(thread())
    assert state.next == () and state.values["steps"] == 2 and not episode_ended(state.values)
    out = fresh.invoke(None, thread())
    assert [s["action"] for s in out["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]


def test_run_to_end_returns_the_same_output_run_resumed_or_found_ended(
    tmp_path: Path, wiki: MemorySource
) -> None:
    """What the eval records: the output values, whichever way `run_to_end` got them."""
    from wikireact.errors import ModelCallError
    from wikireact.graph import OUTPUT_KEYS, run_to_end
    from wikireact.storage.sqlite.threads import SqliteThreads

    store = SqliteThreads(tmp_path / "t.db")
    try:
        failing = ScriptedChatModel(outputs=GOOD_RUN, errors={2: ConnectionError("down")})
        with pytest.raises(ModelCallError):
            run_to_end(build_graph(store.saver, model=failing, wiki=wiki), QUESTION, thread("a"))
        graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
        resumed = run_to_end(graph, QUESTION, thread("a"))
        found = run_to_end(graph, QUESTION, thread("a"))
        straight = run_to_end(graph, QUESTION, thread("b"))
        values = graph.get_state(thread("a")).values
    finally:
        store.close()
    assert set(resumed) == set(OUTPUT_KEYS) and resumed["answer"] == "yes"
    assert resumed == found == {key: values[key] for key in OUTPUT_KEYS}
    assert resumed["trajectory"] == straight["trajectory"] and resumed["steps"] == 4
