"""`list_checkpoints` (what `wikireact history` prints) agrees with `get_state_history`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from support import GOOD_RUN, QUESTION, thread

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.history import CheckpointSummary, list_checkpoints
from wikireact.state import InputState, OutputState, State
from wikireact.storage.sqlite.threads import SqliteThreads

Graph = CompiledStateGraph[State, Context, InputState, OutputState]


def from_snapshots(graph: Graph, thread_id: str) -> list[CheckpointSummary]:
    return [
        CheckpointSummary(
            s.config["configurable"]["checkpoint_id"],
            (s.metadata or {}).get("step"),
            s.values.get("steps", 0),
            s.values.get("status"),
            tuple(sorted(s.next)),
            (s.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
        )
        for s in graph.get_state_history(thread(thread_id))
    ]


def test_listing_matches_full_snapshots_in_every_situation(
    tmp_path: Path, wiki: MemorySource
) -> None:
    store = SqliteThreads(tmp_path / "threads.db")
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread("done"), durability="sync")  # finished
    failing = build_graph(
        store.saver,
        wiki=wiki,
        model=ScriptedChatModel(outputs=GOOD_RUN, errors={2: TimeoutError("down")}),
    )
    with pytest.raises(Exception, match="did not answer"):  # failed in the middle
        failing.invoke({"question": QUESTION}, thread("failed"), durability="sync")
    graph.invoke(
        {"question": QUESTION}, thread("paused"), context=Context(approve=True)
    )  # interrupted
    history = list(graph.get_state_history(thread("done")))
    before_act = next(s for s in history if s.next == ("act",))
    graph.update_state(
        before_act.config, {"current": {"action_text": "Search[Ed Wood]"}}, as_node="parse"
    )  # forked
    for thread_id in ("done", "failed", "paused"):
        listed = list_checkpoints(store.saver, thread_id)
        assert listed == from_snapshots(graph, thread_id), thread_id
        assert len(listed) > 3
    assert {s.next for s in list_checkpoints(store.saver, "done")} >= {
        ("__start__",),
        ("reason",),
        ("parse",),
        ("act",),
        ("observe",),
        (),
    }
    assert list_checkpoints(store.saver, "no-such-thread") == []


def test_other_savers_are_listed_from_snapshots(wiki: MemorySource) -> None:
    saver = InMemorySaver()
    graph = build_graph(saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread())
    listed = list_checkpoints(saver, "t1")
    assert listed == from_snapshots(graph, "t1") and listed[0].status == "finished"


def without_write_permission(command: list[str]) -> list[str]:
    """Run `command` bound by file permissions (root drops the capabilities that bypass them)."""
    if os.geteuid() != 0:
        return command
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]


@pytest.mark.parametrize("with_wal", [False, True], ids=["closed", "open-writer"])
def test_history_reads_a_checkpoint_file_in_a_read_only_directory(
    tmp_path: Path, wiki: MemorySource, with_wal: bool
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    db = folder / "threads.db"
    store = SqliteThreads(db)
    store.register("t1", QUESTION, Context(model="scripted:x", wiki="offline"))
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread("t1"), durability="sync")
    if not with_wal:
        store.close()
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    folder.chmod(0o555)
    try:
        done = subprocess.run(
            without_write_permission(
                [sys.executable, "-m", "wikireact", "history", "t1", "--db", str(db), "--json"]
            ),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        folder.chmod(0o755)
        if with_wal:
            store.close()
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["answer"] == "yes" and shown["status"] == "finished"
    if not with_wal:
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
