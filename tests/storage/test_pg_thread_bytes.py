"""A PostgreSQL thread's listed bytes count every column its rows store, the packed ones too.

`wikireact threads list` and `threads stats` (its largest threads) show each thread's
bytes: on PostgreSQL the sum of `pg_column_size` over its rows in every table of the store.
The packed layout keeps a checkpoint's payload in `checkpoints.packed`, beside the stock
`checkpoint` and `metadata`: left out, a thread showed a fraction of what it stores.
"""

from __future__ import annotations

import psycopg
from support import MANY_PAGES, distinct_steps, thread

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.storage.catalog import list_threads
from wikireact.storage.postgres import layout
from wikireact.storage.threads import open_threads

STEPS = 40
_COLUMNS = {
    "checkpoints": ("checkpoint", "metadata", "packed"),
    "checkpoint_blobs": ("blob",),
    "checkpoint_writes": ("blob",),
    layout.TASK_WRITES: ("data",),
    layout.PIECES: ("data",),
}


def _stored_bytes(url: str, thread_id: str) -> int:
    """Every stored column of the thread's rows, by `pg_column_size` (NULL counting 0)."""
    total = 0
    with psycopg.connect(url) as conn:
        for table, columns in _COLUMNS.items():
            sizes = " + ".join(f"coalesce(pg_column_size({c}), 0)" for c in columns)
            row = conn.execute(
                f"SELECT coalesce(sum({sizes}), 0) FROM {table} WHERE thread_id = %s", (thread_id,)
            ).fetchone()
            total += int(row[0]) if row else 0
    return total


def test_a_threads_bytes_are_every_column_its_rows_store(pg_url: str) -> None:
    store = open_threads(pg_url)
    try:
        graph = build_graph(
            store.saver,
            model=ScriptedChatModel(outputs=distinct_steps(STEPS)),
            wiki=MemorySource(MANY_PAGES),
        )
        out = graph.invoke(
            {"question": "q"},
            thread("t1"),
            context=Context(max_steps=STEPS, repetition_limit=STEPS),
            durability="sync",
        )
        assert out["status"] == "finished"
        (info,) = [i for i in list_threads(store) if i.thread_id == "t1"]
    finally:
        store.close()
    with psycopg.connect(pg_url) as conn:
        packed = conn.execute(
            "SELECT sum(pg_column_size(packed)) FROM checkpoints WHERE thread_id = 't1'"
        ).fetchone()
    assert packed is not None and packed[0] > 0  # the layout this is about
    assert info.bytes == _stored_bytes(pg_url, "t1")
