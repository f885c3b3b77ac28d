"""`wait_interruptibly` answers as `concurrent.futures.wait` does (it only wakes every round)."""

from __future__ import annotations

import threading
from concurrent.futures import ALL_COMPLETED, FIRST_EXCEPTION, Future
from typing import Any, Literal

import pytest

from wikireact.eval.workers import DaemonPool, close_after, wait_interruptibly


def _future(state: str) -> Future[int]:
    future: Future[int] = Future()
    if state == "ok":
        future.set_result(1)
    elif state == "raised":
        future.set_exception(ValueError("x"))
    elif state == "cancelled":
        future.cancel()
    return future


def _waited(
    futures: list[Future[Any]], return_when: Literal["ALL_COMPLETED", "FIRST_EXCEPTION"]
) -> tuple[set[Future[Any]], set[Future[Any]]]:
    """`wait_interruptibly`'s answer, or a failure if it has none within 30 s (no hang)."""
    answers: list[tuple[set[Future[Any]], set[Future[Any]]]] = []
    waiter = threading.Thread(
        target=lambda: answers.append(wait_interruptibly(futures, return_when)),
        daemon=True,
    )
    waiter.start()
    waiter.join(30)
    assert answers, "wait_interruptibly did not return"
    return answers[0]


def test_all_completed_waits_for_every_future_raised_or_not() -> None:
    futures = [_future("ok"), _future("raised"), _future("pending")]
    threading.Timer(0.2, futures[2].set_result, (2,)).start()
    done, pending = _waited(futures, ALL_COMPLETED)
    assert done == set(futures) and not pending


def test_first_exception_returns_once_one_raised_leaving_the_running_ones() -> None:
    running = _future("pending")
    raised = _future("pending")
    threading.Timer(0.2, raised.set_exception, (ValueError("x"),)).start()
    done, pending = _waited([_future("ok"), running, raised], FIRST_EXCEPTION)
    assert raised in done and pending == {running}


@pytest.mark.parametrize("futures", [[], [_future("cancelled"), _future("ok")]])
def test_nothing_or_only_cancelled_and_finished_futures_return_at_once(
    futures: list[Future[int]],
) -> None:
    done, pending = _waited(futures, FIRST_EXCEPTION)  # a cancel is no exception
    assert done == set(futures) and not pending


def test_a_pool_failure_is_seen_while_other_calls_still_run() -> None:
    gate = threading.Event()
    pool = DaemonPool(2)

    def fail() -> None:
        raise RuntimeError("boom")

    held = pool.submit(gate.wait, 60)
    failed = pool.submit(fail)
    done, pending = _waited([held, failed], FIRST_EXCEPTION)
    assert done == {failed} and pending == {held}
    gate.set()
    pool.shutdown()


def test_every_close_runs_in_order_even_after_one_fails() -> None:
    closed: list[str] = []

    def store_close() -> None:
        closed.append("store")
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        close_after([_future("ok")], store_close, lambda: closed.append("model"))
    assert closed == ["store", "model"]


def test_nothing_is_closed_until_the_calls_running_end() -> None:
    closed: list[str] = []
    model_closed = threading.Event()
    running = _future("pending")
    close_after([running, _future("ok")], lambda: closed.append("store"), model_closed.set)
    assert not model_closed.wait(0.2) and closed == []  # a call still runs: nothing closed
    running.set_result(1)
    assert model_closed.wait(60) and closed == ["store"]
