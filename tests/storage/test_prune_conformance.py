"""LangGraph's conformance suite on the PostgreSQL saver, prune/copy_thread/delete_for_runs included.

(The SQLite saver's run is `test_saver.py::test_langgraph_checkpointer_conformance`.)
`PostgresSaver` 3.2 implements none of the three for wikireact's threads;
`NulSafePostgresSaver` does (`wikireact.storage.postgres.prune`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from support import AsyncDelegating

from wikireact.storage.postgres.connect import connect
from wikireact.storage.postgres.saver import NulSafePostgresSaver


class AsyncPostgresSaver(AsyncDelegating, NulSafePostgresSaver):
    """The sync saver with async methods delegating to it (the suite calls only those)."""


def test_langgraph_checkpointer_conformance_on_postgres(pg_url: str) -> None:
    conformance = pytest.importorskip("langgraph.checkpoint.conformance")

    @conformance.checkpointer_test(name="NulSafePostgresSaver")
    async def factory() -> AsyncIterator[NulSafePostgresSaver]:
        conn = connect(pg_url)
        saver = AsyncPostgresSaver(conn)
        saver.setup()
        yield saver
        conn.close()

    report = asyncio.run(conformance.validate(factory))
    failed = {name: r.failures for name, r in report.results.items() if r.passed is False}
    assert report.passed_all_base() and report.passed_all(), failed
    assert {"prune", "copy_thread", "delete_for_runs"} <= {
        name for name, r in report.results.items() if r.passed
    }
