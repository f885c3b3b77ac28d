"""LangGraph's internals the compact saver relies on, imported here and nowhere else.

`CompactSqliteSaver` stores what LangGraph gives a checkpointer; three names it needs are
not part of LangGraph's documented saver API and may move in any release:

- `DeltaSnapshot` (`langgraph.checkpoint.serde.types._DeltaSnapshot`, beta): how a
  `DeltaChannel` marks a channel value that is a full snapshot, not a delta;
- `WRITES_IDX_MAP` (`langgraph.checkpoint.base`): the fixed write indexes of the special
  channels (errors, interrupts), whose writes replace earlier ones;
- `writes_sort_key` (`langgraph.checkpoint.base`): the order `get_tuple` returns writes in.

When one moves, importing this module fails with one message naming it (and
tests/storage/test_saver_surface.py fails), instead of the saver failing at a checkpoint.
"""

from __future__ import annotations

try:
    from langgraph.checkpoint.base import WRITES_IDX_MAP, writes_sort_key
    from langgraph.checkpoint.serde.types import _DeltaSnapshot as DeltaSnapshot
except ImportError as exc:  # pragma: no cover - only with a LangGraph that moved them
    raise ImportError(
        f"wikireact's SQLite saver needs LangGraph internals that moved ({exc}); "
        "pin langgraph-checkpoint to a version this wikireact supports, or update "
        "wikireact.storage.sqlite._langgraph"
    ) from exc

__all__ = ["WRITES_IDX_MAP", "DeltaSnapshot", "writes_sort_key"]
