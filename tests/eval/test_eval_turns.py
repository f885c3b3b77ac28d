"""The evaluation's compute turn: one worker computes at a time, all wait for the model together."""

from __future__ import annotations

import copy
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import PrivateAttr
from support import EVAL_SCRIPT, SpyModel, eval_config, snapshot_eval

import wikireact.eval.methods as methods
from wikireact.eval.run import run_eval
from wikireact.eval.turns import TurnFreeSource, Turns
from wikireact.wiki.base import Disambiguation, Page
from wikireact.wiki.snapshot import SnapshotSource

WORKERS = 4
"""`eval_config`'s concurrency, and the questions of the `files` dataset."""


class MeetingModel(SpyModel):
    """A scripted model whose first WORKERS calls return only once all of them are in flight."""

    _meeting: threading.Barrier = PrivateAttr(
        default_factory=lambda: threading.Barrier(WORKERS, timeout=10)
    )
    _arrived: int = PrivateAttr(default=0)

    def _respond(
        self, index: int, messages: Any, stop: list[str] | None, outputs: Any = None
    ) -> Any:
        with self._gate:
            self._arrived += 1
            meets = self._arrived <= WORKERS
        if meets:
            self._meeting.wait()  # BrokenBarrierError (a failed step) unless all are waiting
        return super()._respond(index, messages, stop, outputs)


class MeetingSource:
    """A snapshot whose first WORKERS fetches return only once all of them are in flight."""

    def __init__(self, source: SnapshotSource) -> None:
        """Wrap `source`."""
        self._source = source
        self._meeting = threading.Barrier(WORKERS, timeout=10)
        self._arrived = 0
        self._gate = threading.Lock()
        self.snapshot_id = source.snapshot_id

    @property
    def requests(self) -> int:
        """The snapshot's requests by the calling thread."""
        return self._source.requests

    def fetch(self, title: str) -> Page | Disambiguation | None:
        """Fetch, meeting the other workers on the first fetches."""
        with self._gate:
            self._arrived += 1
            meets = self._arrived <= WORKERS
        if meets:
            self._meeting.wait()
        return self._source.fetch(title)

    def similar(self, query: str, limit: int = 5) -> list[str]:
        """Titles like `query`."""
        return self._source.similar(query, limit)


def _answers(report: dict[str, Any]) -> tuple[float, float]:
    mean = report["metrics"]["mean"]
    return mean["em"], mean["finish_rate"]


def test_workers_wait_for_the_model_together(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    model = MeetingModel(outputs=EVAL_SCRIPT)
    report = snapshot_eval(dataset, snapshot, tmp_path / "out", model, concurrency=WORKERS)
    assert model.peak == WORKERS
    assert _answers(report) == (0.25, 1.0)  # as at concurrency 1: no step failed


def test_workers_wait_for_wikipedia_together(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    report = run_eval(
        eval_config(dataset, snapshot, concurrency=WORKERS),
        tmp_path / "out",
        model=SpyModel(outputs=EVAL_SCRIPT),
        wiki=MeetingSource(SnapshotSource.open(snapshot)),
    )
    assert _answers(report) == (0.25, 1.0)
    assert report["metrics"]["mean"]["wiki_requests_per_question"] == 2


def test_one_worker_computes_at_a_time(
    files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset, snapshot = files
    inside, most = 0, 0
    gate = threading.Lock()
    record = methods._record

    def slow_record(*args: Any) -> dict[str, Any]:
        nonlocal inside, most
        with gate:
            inside += 1
            most = max(most, inside)
        time.sleep(0.2)  # long enough for every other worker to arrive, were it let in
        with gate:
            inside -= 1
        return record(*args)

    monkeypatch.setattr(methods, "_record", slow_record)
    report = snapshot_eval(
        dataset, snapshot, tmp_path / "out", SpyModel(outputs=EVAL_SCRIPT), concurrency=WORKERS
    )
    assert _answers(report) == (0.25, 1.0)
    assert most == 1


def test_a_failed_model_call_gives_the_turn_back() -> None:
    turns = Turns()
    model = SpyModel(outputs=["Thought: x"], fail_after=0)
    with turns.hold():
        with pytest.raises(ConnectionError):
            model.invoke("q", config={"callbacks": [turns]})
        assert turns.held
    assert not turns.held
    taken = threading.Event()

    def take() -> None:
        with turns.hold():
            taken.set()

    taker = threading.Thread(target=take)
    taker.start()
    taker.join(5)
    assert taken.is_set()  # the turn is free for another worker


def test_the_wrapped_source_reads_through_and_copies(files: tuple[Path, Path]) -> None:
    _, snapshot = files
    source = SnapshotSource.open(snapshot)
    wrapped = TurnFreeSource(source, Turns())
    assert copy.copy(wrapped).snapshot_id == source.snapshot_id
    assert wrapped.fetch("Ed Wood") == source.fetch("Ed Wood")
