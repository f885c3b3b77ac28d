"""Worker threads an interrupted evaluation does not wait for.

`concurrent.futures.ThreadPoolExecutor` joins its threads when the interpreter exits, so
after Ctrl-C the process would wait for every question in flight (minutes on a slow
model). The evaluation's questions are checkpointed after every step and resumed by
`--resume`, so waiting buys nothing: `DaemonPool` runs them on daemon threads, and Ctrl-C
ends the command as any error does (finally blocks and atexit handlers run), leaving the
questions in flight where their last checkpoint left them.

Ctrl-C can land anywhere in `submit`, e.g. while `Thread.start` waits for the new thread: the
call may already be queued or running though its future never reached the caller. The pool
therefore keeps every future it made; after `shutdown(cancel_futures=True)`, `unfinished()`
is exactly the calls still running, which whoever closes their resources must wait for.

Waiting on the questions is `wait_interruptibly`, in bounded rounds: a Ctrl-C handled in the
instant before a wait without a timeout blocks never wakes it (the signal interrupted no
system call), so it would sleep until a question ended, and a held one never does.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ALL_COMPLETED, FIRST_EXCEPTION, Future, wait
from contextlib import ExitStack
from typing import Any, Literal, TypeVar

T = TypeVar("T")
_Job = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]
ROUND_S = 0.5  # at most this long between a missed Ctrl-C and its KeyboardInterrupt


def wait_interruptibly(
    futures: Iterable[Future[Any]],
    return_when: Literal["ALL_COMPLETED", "FIRST_EXCEPTION"] = ALL_COMPLETED,
) -> tuple[set[Future[Any]], set[Future[Any]]]:
    """`concurrent.futures.wait` (no timeout), woken every `ROUND_S` so Ctrl-C is never missed.

    Returns (done, not done) as `wait` does: when all are done, or, with `FIRST_EXCEPTION`,
    as soon as one raised. Each future reports its end once (a done-callback), so a round
    costs the same for ten futures or a whole dataset's.
    """
    given = set(futures)
    ended = threading.Event()
    counter = threading.Lock()
    left = len(given)

    def on_done(future: Future[Any]) -> None:
        nonlocal left
        raised = not future.cancelled() and future.exception() is not None
        with counter:
            left -= 1
            if left == 0 or (raised and return_when == FIRST_EXCEPTION):
                ended.set()

    if not given:
        ended.set()
    for future in given:
        future.add_done_callback(on_done)  # called at once for a future already done
    while not ended.wait(ROUND_S):
        pass
    done = {future for future in given if future.done()}
    return done, given - done


def close_after(running: Iterable[Future[Any]], *closes: Callable[[], None]) -> None:
    """Call `closes` in order: now if every call in `running` is done, else once they are.

    What the calls still running use (a store, a model cache) is closed only after them.
    Each close is called even if an earlier one raised (the first error is raised after).
    """

    def close() -> None:
        with ExitStack() as later:  # runs its callbacks last-in first: push them reversed
            for each in reversed(closes):
                later.callback(each)

    unfinished = [f for f in running if not f.done()]
    if not unfinished:
        close()
        return

    def close_when_done() -> None:
        wait(unfinished)
        close()

    threading.Thread(target=close_when_done, name="wikireact-eval-close", daemon=True).start()


class DaemonPool:
    """Run submitted calls on at most `workers` daemon threads; a drop-in for the executor's use here."""

    def __init__(self, workers: int, name: str = "wikireact-eval") -> None:
        """Prepare the pool; threads start with the first submissions."""
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._workers, self._name = max(workers, 1), name
        self._lock = threading.Lock()
        self._closed = False
        self._futures: list[Future[Any]] = []

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue `fn(*args)`; return its future."""
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit to a pool that was shut down")
            self._futures.append(future)  # first: an interrupt after it leaves no call unknown
            self._jobs.put((future, fn, args))
            if len(self._threads) < self._workers:
                thread = threading.Thread(
                    target=self._work, name=f"{self._name}-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    def shutdown(self, *, cancel_futures: bool = False) -> None:
        """Take no more calls (cancelling those not yet running if asked); running ones go on, unwaited."""
        with self._lock:
            self._closed = True
            if cancel_futures:  # a worker skips a cancelled call it takes from the queue
                for future in self._futures:
                    future.cancel()  # no-op for a call already running or done
            for _ in self._threads:
                self._jobs.put(None)  # one stop mark per thread

    def unfinished(self) -> list[Future[Any]]:
        """Return the futures of calls not done (after `shutdown(cancel_futures=True)`: those running)."""
        with self._lock:
            return [future for future in self._futures if not future.done()]

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # the future carries it to whoever waits
                future.set_exception(exc)
