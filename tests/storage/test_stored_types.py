"""A stored checkpoint is data: a value naming `os.system` is refused on read, never run (issue 34 item 1).

LangGraph's serializer decodes a msgpack EXT record `(module, name, argument)` by importing
`module.name` and calling it. Each test plants such a record through `graph.update_state` (an
Enum whose module is `os` and whose name is `system`, so that decoding it would run
`touch MARKER`), then reads the thread through one of wikireact's readers: every one refuses
in one line naming the database and the thread, and the marker never appears.
"""

from __future__ import annotations

import enum
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from support import (
    EVAL_SCRIPT,
    GOOD_RUN,
    QUESTION,
    SpyModel,
    flat,
    snapshot_eval,
    thread,
    write_script,
)
from typer.testing import CliRunner

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.cli.app import app
from wikireact.errors import StoredTypeError
from wikireact.storage.long_term import open_store
from wikireact.storage.threads import open_threads

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("data_dir", "wide_terminal")


def command_enum(marker: Path) -> Any:
    """A value that LangGraph's permissive decoding turns into `os.system("touch MARKER")`."""
    planted = enum.Enum("system", {"RUN": f"touch {marker}"})  # type: ignore[misc]
    planted.__module__ = "os"
    return planted.RUN


def plant(db: str, wiki: MemorySource, marker: Path, thread_id: str = "t1") -> None:
    """Run a registered thread in `db` with wikireact's saver, then replace its answer by the enum."""
    threads = open_threads(db)
    try:
        threads.register(thread_id, QUESTION, Context())
        graph = build_graph(threads.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
        graph.invoke({"question": QUESTION}, thread(thread_id))
        graph.update_state(thread(thread_id), {"answer": command_enum(marker)})
    finally:
        threads.close()
    assert not marker.exists()


def assert_refused_in_one_line(stderr: str, db: str, thread_id: str = "t1") -> None:
    text = flat(stderr)
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert f"thread {thread_id!r}" in text and "os.system" in text and "Traceback" not in text
    where = db if db.endswith(".db") else "postgresql://127.0.0.1:"
    assert where in text and "@" not in text  # no password, no user@


@pytest.mark.parametrize(
    "command", [["history", "t1"], ["resume", "t1"], ["history", "t1", "--json"]]
)
def test_history_and_resume_refuse_a_planted_type_and_run_nothing(
    db_target: str, wiki: MemorySource, tmp_path: Path, command: list[str]
) -> None:
    marker = tmp_path / "PWNED"
    plant(db_target, wiki, marker)
    if command[0] == "resume":  # a model to continue with (checked before the thread is read)
        command = [*command, "--model", write_script(tmp_path, GOOD_RUN)]
    result = runner.invoke(app, [*command, "--db", db_target])
    assert result.exit_code == 2, result.output
    assert_refused_in_one_line(result.stderr, db_target)
    assert not marker.exists()


def test_the_library_saver_refuses_it_in_get_state_and_history(
    db_target: str, wiki: MemorySource, tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    plant(db_target, wiki, marker)
    threads = open_threads(db_target)
    try:
        graph = build_graph(threads.saver, model=ScriptedChatModel(outputs=[]), wiki=wiki)
        with pytest.raises(StoredTypeError, match=r"thread 't1' in .*os\.system") as raised:
            graph.get_state(thread("t1"))
        assert raised.value.thread_id == "t1" and "\n" not in str(raised.value)
        with pytest.raises(StoredTypeError, match="os.system"):
            list(graph.get_state_history(thread("t1")))
        with pytest.raises(StoredTypeError, match="os.system"):
            graph.invoke(None, thread("t1"))
    finally:
        threads.close()
    assert not marker.exists()


def test_a_nested_record_and_a_pickled_value_are_refused_too(tmp_path: Path) -> None:
    from wikireact.storage.serde import StrictSerializer

    marker = tmp_path / "PWNED"
    serde = StrictSerializer(location="FILE")
    from langgraph.types import Interrupt  # an allowed type around a refused one

    nested = serde.dumps_typed({"x": [Interrupt(value=command_enum(marker))]})
    with pytest.raises(StoredTypeError, match=r"FILE holds a value of type os\.system"):
        serde.loads_typed(nested)
    with pytest.raises(StoredTypeError, match="FILE holds a pickled value"):
        serde.loads_typed(("pickle", f"cos\nsystem\n(S'touch {marker}'\ntR.".encode()))
    multiline = ormsgpack.packb(ormsgpack.Ext(0, ormsgpack.packb(["os\nx", "system\ny", "z"])))
    with pytest.raises(StoredTypeError, match=r"type os\?x\.system\?y, which") as raised:
        serde.loads_typed(("msgpack", multiline))
    assert "\n" not in str(raised.value)
    envelope = {"lc": 2, "type": "constructor", "id": ["os", "system"], "args": [f"touch {marker}"]}
    assert serde.loads_typed(("json", json.dumps(envelope).encode())) == envelope  # kept as data
    assert not marker.exists()


def test_eval_resume_refuses_a_planted_type(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    out, marker = tmp_path / "run", tmp_path / "PWNED"
    with pytest.raises(Exception, match="model down"):
        snapshot_eval(dataset, snapshot, out, SpyModel(outputs=EVAL_SCRIPT, fail_after=9))
    with closing(sqlite3.connect(out / "threads.db")) as conn:
        planted = [t for (t,) in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
    assert len(planted) == 4  # the unfinished ones are read on resume
    threads = open_threads(out / "threads.db")
    graph = build_graph(threads.saver, model=ScriptedChatModel(outputs=[]), wiki=MemorySource({}))
    for thread_id in planted:
        graph.update_state(thread(thread_id), {"answer": command_enum(marker)})
    threads.close()
    with pytest.raises(StoredTypeError, match=rf"thread '.*' in {out / 'threads.db'} holds"):
        snapshot_eval(dataset, snapshot, out, SpyModel(outputs=EVAL_SCRIPT), resume=True)
    assert not marker.exists()


def test_the_long_term_store_keeps_json_and_builds_no_objects(
    db_target: str, tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    envelope = {"lc": 2, "type": "constructor", "id": ["os", "system"], "args": [f"touch {marker}"]}
    with open_store(db_target) as store:
        store.put(("lessons", "q"), "k", {"lesson": envelope})
    with open_store(db_target) as store:
        item = store.get(("lessons", "q"), "k")
        found = store.search(("lessons",))
    assert item is not None and item.value == {"lesson": envelope}
    assert [i.value for i in found] == [{"lesson": envelope}]
    assert not marker.exists()
