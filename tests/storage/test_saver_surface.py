"""The compact saver owns its storage: every method of LangGraph's saver API is decided.

`CompactSqliteSaver` stores checkpoints in its own tables (`task_writes`, `value_chunks`),
so a storage method inherited from a stock saver would read or write the wrong tables
silently. Each method of `BaseCheckpointSaver` is either implemented by the saver, refused
with a clear error, or listed as inheritable (it only calls the saver's own methods); a
method LangGraph adds fails here until it is decided. LangGraph's private names the saver
needs are imported in one module, which fails loudly when they move.
"""

from __future__ import annotations

import ast
import inspect
import sqlite3
from pathlib import Path

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from support import GOOD_RUN, QUESTION, thread

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import ThreadsError
from wikireact.storage.materialise import delta_channels
from wikireact.storage.sqlite import saver as saver_module
from wikireact.storage.sqlite.saver import INHERITED, CompactSqliteSaver
from wikireact.storage.sqlite.threads import SqliteThreads

SRC = Path(saver_module.__file__).parents[3]  # src/


def public_methods(cls: type) -> set[str]:
    return {n for n, v in inspect.getmembers(cls) if callable(v) and not n.startswith("_")}


def test_every_method_of_the_base_is_implemented_refused_or_listed() -> None:
    own = {n for n in vars(CompactSqliteSaver) if not n.startswith("_")}
    undecided = public_methods(BaseCheckpointSaver) - own - INHERITED
    assert not undecided, f"decide these saver methods: {sorted(undecided)}"
    assert not (INHERITED & own), "a method listed as inherited is overridden"
    assert CompactSqliteSaver.__mro__[1] is BaseCheckpointSaver  # no stock storage below


@pytest.fixture
def store(tmp_path: Path, wiki: MemorySource):  # type: ignore[no-untyped-def]
    threads = SqliteThreads(tmp_path / "t.db")
    graph = build_graph(threads.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    graph.invoke({"question": QUESTION}, thread("a"))
    yield threads
    threads.close()


def test_copy_thread_copies_the_whole_episode(store: SqliteThreads, wiki: MemorySource) -> None:
    store.saver.copy_thread("a", "b")
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    source, copy = graph.get_state(thread("a")), graph.get_state(thread("b"))
    assert copy.values == source.values and copy.values["answer"] == "yes"
    history = [s.values for s in graph.get_state_history(thread("b"))]
    assert history == [s.values for s in graph.get_state_history(thread("a"))]
    store.saver.delete_thread("a")  # the copy shares nothing with its source
    assert graph.get_state(thread("b")).values == copy.values


def test_copying_onto_a_thread_that_exists_is_refused_unchanged(
    store: SqliteThreads, wiki: MemorySource
) -> None:
    graph = build_graph(store.saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    store.saver.copy_thread("a", "b")
    store.saver.prune(["b"], channels=delta_channels([graph]))  # copied, then pruned
    kept = [(t.config, t.checkpoint) for t in store.saver.list(thread("b"))]

    with pytest.raises(ThreadsError, match="'b' already has checkpoints") as caught:
        store.saver.copy_thread("a", "b")

    assert "\n" not in str(caught.value)
    assert [(t.config, t.checkpoint) for t in store.saver.list(thread("b"))] == kept
    assert graph.get_state(thread("b")).values == graph.get_state(thread("a")).values


def test_a_file_the_stock_saver_wrote_is_read(tmp_path: Path, wiki: MemorySource) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(tmp_path / "stock.db", check_same_thread=False)
    stock = build_graph(SqliteSaver(conn), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    stock.invoke({"question": QUESTION}, thread("a"))
    expected = stock.get_state(thread("a")).values
    conn.close()
    conn = sqlite3.connect(tmp_path / "stock.db", check_same_thread=False)
    compact = build_graph(CompactSqliteSaver(conn), wiki=wiki)
    assert compact.get_state(thread("a")).values == expected
    conn.close()


def test_langgraphs_private_names_are_imported_in_one_module_only() -> None:
    from wikireact.storage.sqlite import _langgraph

    assert _langgraph.DeltaSnapshot([1, 2]).value == [1, 2]
    assert _langgraph.WRITES_IDX_MAP  # the special channels' write indexes
    importers = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("langgraph"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                private += [a.name for a in node.names if a.name in _langgraph.__all__]
                if private:
                    importers.append((path.relative_to(SRC).as_posix(), private))
    assert {path for path, _ in importers} == {"wikireact/storage/sqlite/_langgraph.py"}, importers
