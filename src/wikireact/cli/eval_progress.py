"""Progress of an evaluation on stderr: a live bar on a terminal, plain lines otherwise.

On a terminal: done/total, EM so far, rate and ETA, redrawn in place. When stderr is
not a terminal (CI, `nohup`, a pipe), one plain line every `interval_s` seconds (even
when no question finished, so a long run is never silent) or every tenth of the run,
and a last line at the end.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

PLAIN_INTERVAL_S = 10.0


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


class EvalProgress:
    """Follow an evaluation: call `start` once, `record` per finished question, then close."""

    def __init__(
        self,
        label: str,
        console: Console,
        interval_s: float = PLAIN_INTERVAL_S,
        score: str = "EM",
    ) -> None:
        """Show progress of the run named `label` on `console` (a bar only if it is a terminal).

        `score` names the running score (`EM`; `acc` for FEVER, whose records' `em` is accuracy).
        """
        self.label = label
        self.score = score
        self.console = console
        self.interval_s = interval_s
        self.total = self.done = self.started_done = 0
        self.em_sum = 0.0
        self.finished_here = 0
        self.t0 = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._last_line = self.t0
        self._done_at_last_line = 0
        self._bar: Progress | None = None
        self._task: Any = None
        self._heartbeat: threading.Thread | None = None

    def __enter__(self) -> EvalProgress:
        """Start the display."""
        if self.console.is_terminal:
            self._bar = Progress(
                TextColumn("[progress.description]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=None, stats="")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Stop the display (a last plain line when the run completed)."""
        self._stop.set()
        if self._bar is not None:
            self._bar.__exit__(kind, error, trace)
        elif kind is None and self.total and self.done != self._done_at_last_line:
            self._line()

    def start(self, total: int, done: int) -> None:
        """Begin: the run has `total` questions, `done` of them finished by an earlier run."""
        with self._lock:
            self.total, self.done, self.started_done = total, done, done
            self.t0 = self._last_line = time.monotonic()
            self._done_at_last_line = done
        if self._bar is not None:
            self._bar.update(self._task, total=total, completed=done, stats=self._stats())
            return
        self._line()
        self._heartbeat = threading.Thread(target=self._beat, name="eval-progress", daemon=True)
        self._heartbeat.start()

    def record(self, record: dict[str, Any]) -> None:
        """Count one finished question."""
        with self._lock:
            self.done += 1
            self.finished_here += 1
            self.em_sum += float(record.get("em") or 0.0)
            due = self.done - self._done_at_last_line >= max(1, self.total // 10)
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, stats=self._stats())
        elif due:
            self._line()

    def _stats(self) -> str:
        done = self.finished_here
        em = f"{self.score} {100 * self.em_sum / done:.1f}%" if done else f"{self.score} -"
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        rate = self.finished_here / elapsed
        return f"{em}, {rate:.2f} q/s" if self.finished_here else em

    def _line(self) -> None:
        with self._lock:
            elapsed = time.monotonic() - self.t0
            rate = self.finished_here / elapsed if elapsed > 0 else 0.0
            left = self.total - self.done
            eta = _duration(left / rate) if rate > 0 else "?"
            percent = 100 * self.done / self.total if self.total else 100.0
            text = (
                f"progress {self.label}: {self.done}/{self.total} ({percent:.0f}%), {self._stats()}, "
                f"elapsed {_duration(elapsed)}, ETA {eta if left else '0m00s'}"
            )
            self._last_line = time.monotonic()
            self._done_at_last_line = self.done
        self.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def _beat(self) -> None:
        while not self._stop.wait(1.0 if self.interval_s > 1 else self.interval_s):
            if time.monotonic() - self._last_line >= self.interval_s:
                self._line()
