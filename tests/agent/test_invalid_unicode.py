"""Text that is not valid Unicode (lone surrogates, which JSON allows) is repaired where it enters.

Policy: every lone surrogate becomes U+FFFD where model text enters the state (`reason`'s
cut, `parse`, an edited action), where page text becomes an observation, and where the
question is read. From there on the text can be searched, checkpointed, shown, printed as
JSON and resumed, and a resumed episode equals an uninterrupted one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest
from support import PAGES, QUESTION, thread, untimed_result
from typer.testing import CliRunner

from wikireact import Context, ScriptedChatModel, build_graph
from wikireact.cli.app import app
from wikireact.errors import ModelCallError
from wikireact.prompting.quoting import sanitize_observation
from wikireact.protocols.text import Action, parse_action, valid_unicode
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.wiki.snapshot import SnapshotDatabase, SnapshotSource

runner = CliRunner()
HOSTILE_RUN = [
    "Thought 1: odd \ud800 text\nAction 1: Search[Ed Wood\udfff]",
    "Thought 2: again \udc00\nAction 2: Search[Ed Wood]",
    "Thought 3: now where\nAction 3: Lookup[born\ud800]",
    "Thought 4: done\nAction 4: Finish[yes \ud800]",
]


def encodable(value: object) -> bool:
    """Whether the value's text can be written as UTF-8 (what a terminal, SQLite or HTTP need)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_valid_unicode_replaces_only_lone_surrogates() -> None:
    assert valid_unicode("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert valid_unicode("\ud83d\ude00") == "\U0001f600"  # a pair written as two code points
    text = "plain, accented é, emoji \U0001f600"
    assert valid_unicode(text) is text
    assert parse_action("Search[x\ud800]") == Action("Search", "x\ufffd")
    assert sanitize_observation("page \udcff text") == "page \ufffd text"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "pages.db"
    store = SnapshotDatabase.create(path)
    store.put_many((title, "page", text) for title, text in PAGES.items())
    store.conn.close()
    return path


HOSTILE_TOOL_RUN = [
    {"content": "odd \ud800 text", "tool": "search", "args": {"title": "Ed Wood\udfff"}},
    {"content": "again \udc00", "tool": "search", "args": {"title": "Ed Wood"}},
    {"content": "now where", "tool": "lookup", "args": {"keyword": "born\ud800"}},
    {"content": "done", "tool": "finish", "args": {"answer": "yes \ud800"}},
]


def run_episode(
    store: SqliteThreads,
    snapshot: Path,
    thread_id: str,
    fail_at: int | None,
    protocol: Literal["text", "tools"] = "text",
) -> dict:
    errors = {fail_at: ConnectionError("model down")} if fail_at is not None else {}
    outputs: list = HOSTILE_RUN if protocol == "text" else HOSTILE_TOOL_RUN
    model = ScriptedChatModel(outputs=outputs, errors=errors)
    graph = build_graph(store.saver, model=model, wiki=SnapshotSource.open(snapshot))
    config = thread(thread_id)
    context = Context(protocol=protocol)
    try:
        graph.invoke({"question": QUESTION}, config, context=context, durability="sync")
    except ModelCallError:
        model.errors.clear()
        graph.invoke(None, config, context=context, durability="sync")
    values = dict(graph.get_state(config).values)
    for record in values.get("audit") or []:  # when each step ran differs between runs
        record.pop("started_at", None)
        record.pop("ended_at", None)
        record.pop("model_seconds", None)
        record.pop("wiki_seconds", None)
    (values.get("current") or {}).pop("model_seconds", None)  # the model call's wall time
    return values


def test_surrogates_from_the_model_run_checkpoint_and_resume_alike(
    tmp_path: Path, snapshot: Path
) -> None:
    store = SqliteThreads(tmp_path / "threads.db")
    straight = run_episode(store, snapshot, "straight", fail_at=None)
    resumed = run_episode(store, snapshot, "resumed", fail_at=2)
    assert straight["status"] == "finished" and straight["answer"] == "yes \ufffd"
    assert encodable(straight) and straight == resumed
    steps = straight["trajectory"]
    assert (
        steps[0]["thought"] == "odd \ufffd text" and steps[0]["action"] == "Search[Ed Wood\ufffd]"
    )
    assert steps[0]["observation"].startswith(
        "Could not find Ed Wood\ufffd."
    )  # searched, not crashed
    assert steps[2]["observation"] == "No more results."


def test_surrogates_in_tool_calls_run_checkpoint_and_resume_alike(
    tmp_path: Path, snapshot: Path
) -> None:
    store = SqliteThreads(tmp_path / "threads.db")
    straight = run_episode(store, snapshot, "straight", fail_at=None, protocol="tools")
    resumed = run_episode(store, snapshot, "resumed", fail_at=2, protocol="tools")
    assert straight["status"] == "finished" and straight["answer"] == "yes \ufffd"
    assert encodable(straight) and straight == resumed
    assert straight["trajectory"][0]["action"] == "Search[Ed Wood\ufffd]"
    assert straight["trajectory"][0]["thought"] == "odd \ufffd text"


def test_surrogates_through_the_cli(
    tmp_path: Path, snapshot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIKIREACT_DATA_DIR", str(tmp_path / "data"))
    script = tmp_path / "hostile.json"
    script.write_text(json.dumps(HOSTILE_RUN))  # JSON escapes: "\ud800"
    short = tmp_path / "short.json"
    short.write_text(json.dumps(HOSTILE_RUN[:2]))
    common = ["--wiki", str(snapshot), "--json"]

    straight = runner.invoke(
        app, ["ask", QUESTION, "--model", f"scripted:{script}", "--thread-id", "a", *common]
    )
    assert straight.exit_code == 0, straight.output
    out = json.loads(straight.stdout)
    assert out["answer"] == "yes \ufffd" and out["trajectory"][0]["thought"] == "odd \ufffd text"

    first = runner.invoke(
        app, ["ask", QUESTION, "--model", f"scripted:{short}", "--thread-id", "b", *common]
    )
    assert first.exit_code == 1 and "wikireact resume b" in first.stderr
    resumed = runner.invoke(app, ["resume", "b", "--json", "--model", f"scripted:{script}"])
    assert resumed.exit_code == 0, resumed.output
    assert untimed_result(resumed.stdout, thread_id="a") == untimed_result(straight.stdout)

    shown = runner.invoke(
        app, ["ask", "What \udcff?", "--model", f"scripted:{script}", "--wiki", str(snapshot)]
    )
    assert shown.exit_code == 0, shown.output
    assert "Thought 1: odd \ufffd text" in shown.stdout and "yes \ufffd" in shown.stdout
