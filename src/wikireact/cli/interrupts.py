"""Ctrl-C without a traceback from a node that finishes after the run was stopped.

LangGraph runs a superstep's tasks on a thread pool. When Ctrl-C stops a run while a task is
still running on a worker thread, the pool is shut down; the task then finishes and its
done-callback tries to save its writes, which the closed pool refuses ("cannot schedule new
futures after shutdown"). `concurrent.futures` logs that with a traceback. Nothing is lost:
the writes of an unfinished superstep are never part of the thread, and `resume` runs that
task again. `quiet_late_tasks` drops exactly that log record, so the CLI's one-line message
is all a user sees; every other record still reaches the log.
"""

from __future__ import annotations

import logging

LATE_TASK_ERROR = "cannot schedule new futures after shutdown"


class _LateTaskFilter(logging.Filter):
    """Drop the record of a task that finished after its run's pool was shut down."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record but that one."""
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, RuntimeError) and str(error) == LATE_TASK_ERROR)


def quiet_late_tasks() -> None:
    """Install the filter on `concurrent.futures`' logger (once)."""
    logger = logging.getLogger("concurrent.futures")
    if not any(isinstance(f, _LateTaskFilter) for f in logger.filters):
        logger.addFilter(_LateTaskFilter())
