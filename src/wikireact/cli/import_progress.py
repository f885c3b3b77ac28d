"""Progress of a dump import on stderr: a bar on a terminal, plain lines when piped.

On a terminal: files done/total, pages, pages/s and ETA, redrawn in place. Otherwise
(CI, `nohup`, a pipe) one line every `interval_s` seconds and a last one at the end.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from wikireact.cli.eval_progress import _duration
from wikireact.wiki.importing.dump_import import DumpStats

PLAIN_INTERVAL_S = 10.0


def describe(stats: DumpStats) -> str:
    """Return `files 12/15517, 4,044 pages, 3,210 pages/s, ETA 27m10s`."""
    rate = stats.pages / stats.elapsed if stats.elapsed > 0 else 0.0
    fraction = stats.bytes_done / stats.bytes_total if stats.bytes_total else 1.0
    left = stats.elapsed * (1 - fraction) / fraction if fraction > 0 else 0.0
    eta = _duration(left) if fraction > 0 else "?"
    return (
        f"files {stats.files_done}/{stats.files}, {stats.pages:,} pages, "
        f"{rate:,.0f} pages/s, ETA {eta}"
    )


class ImportProgress:
    """Show a dump import's progress: pass `update` as the import's progress callback."""

    def __init__(self, label: str, console: Console, interval_s: float = PLAIN_INTERVAL_S) -> None:
        """Show the import of `label` on `console` (a bar only if it is a terminal)."""
        self.label = label
        self.console = console
        self.interval_s = interval_s
        self._last = time.monotonic()
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._stats: DumpStats | None = None

    def __enter__(self) -> ImportProgress:
        """Start the display."""
        if self.console.is_terminal:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
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
        """Stop the display (a last plain line when the import completed)."""
        if self._bar is not None:
            self._bar.__exit__(kind, error, trace)
        elif kind is None and self._stats is not None:
            self._line(self._stats)

    def update(self, stats: DumpStats) -> None:
        """Show the import's state now."""
        self._stats = stats
        if self._bar is not None and self._task is not None:
            self._bar.update(
                self._task,
                total=stats.bytes_total,
                completed=stats.bytes_done,
                stats=describe(stats),
            )
        elif time.monotonic() - self._last >= self.interval_s:
            self._line(stats)

    def _line(self, stats: DumpStats) -> None:
        self._last = time.monotonic()
        self.console.print(
            f"progress {self.label}: {describe(stats)}", highlight=False, markup=False
        )
