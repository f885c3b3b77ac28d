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
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
_Job = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]


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
