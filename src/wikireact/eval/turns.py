"""`Turns`: an evaluation's workers run their Python one at a time, and wait for the model together.

CPython runs one thread's Python at a time. When 16 episodes wake from their model calls
together, the interpreter lock interleaves them (every 5 ms, and at each SQLite call and
each hand-off to LangGraph's save thread), so they all finish their steps late and
together, call the model together, and wake together again: every round queues.

With `Turns`, a worker holds the turn while it computes (`hold`) and gives it up while it
waits for the outside world: a model call (this object is a LangChain callback handler:
`on_chat_model_start`/`on_llm_start` give the turn up, `on_llm_end`/`on_llm_error` take it
back) or a Wikipedia request (`TurnFreeSource`). A step then runs without being
interleaved, episodes spread out over the model's latency, and their waits overlap
instead of queueing. Only calls made by the thread holding the turn give it up; a worker
whose turn was never taken back (an event LangChain did not send) simply runs without
one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from wikireact.wiki.base import Disambiguation, Page, WikiSource


class Turns(BaseCallbackHandler):
    """One turn to compute, passed between threads; give it to model calls as a callback."""

    ignore_chain = True
    ignore_agent = True
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(self) -> None:
        """Create the turn, held by nobody."""
        self._lock = threading.Lock()
        self._local = threading.local()

    @property
    def held(self) -> bool:
        """Whether the calling thread holds the turn."""
        return bool(getattr(self._local, "held", False))

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the turn for the block (given up and taken back around its waits)."""
        if self.held:  # already this thread's: the outer block gives it back
            yield
            return
        self._take()
        try:
            yield
        finally:
            if self.held:
                self._give()

    @contextmanager
    def released(self) -> Iterator[None]:
        """Give the turn up for the block if the calling thread holds it (a wait)."""
        if not self.held:
            yield
            return
        self._give()
        try:
            yield
        finally:
            self._take()

    def _take(self) -> None:
        self._lock.acquire()
        self._local.held = True

    def _give(self) -> None:
        self._local.held = False
        self._lock.release()

    def _waits(self) -> set[UUID]:
        waits: set[UUID] | None = getattr(self._local, "waits", None)
        if waits is None:
            waits = self._local.waits = set()
        return waits

    def _call_starts(self, run_id: UUID) -> None:
        if self.held:
            self._waits().add(run_id)
            self._give()

    def _call_ends(self, run_id: UUID) -> None:
        waits = self._waits()
        if run_id in waits:
            waits.discard(run_id)
            self._take()

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        """Give the turn up while a chat model call runs."""
        self._call_starts(run_id)

    def on_llm_start(
        self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID, **kwargs: Any
    ) -> None:
        """Give the turn up while a (non-chat) model call runs."""
        self._call_starts(run_id)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Take the turn back: the model answered."""
        self._call_ends(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Take the turn back: the model call failed."""
        self._call_ends(run_id)


class TurnFreeSource:
    """A `WikiSource` whose requests give up the caller's turn while they wait."""

    def __init__(self, source: WikiSource, turns: Turns) -> None:
        """Wrap `source`; its other attributes (e.g. `snapshot_id`) read through."""
        self._source = source
        self._turns = turns

    @property
    def requests(self) -> int:
        """The wrapped source's request count for the calling thread."""
        return self._source.requests

    def fetch(self, title: str) -> Page | Disambiguation | None:
        """Fetch a page without holding the turn."""
        with self._turns.released():
            return self._source.fetch(title)

    def similar(self, query: str, limit: int = 5) -> list[str]:
        """Search titles without holding the turn."""
        with self._turns.released():
            return self._source.similar(query, limit)

    def __getattr__(self, name: str) -> Any:
        """Read any other public attribute (e.g. `snapshot_id`) from the wrapped source."""
        if name.startswith("_"):  # e.g. copy.copy looks these up before __init__ has run
            raise AttributeError(name)
        return getattr(self._source, name)
