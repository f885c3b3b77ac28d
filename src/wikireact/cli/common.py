"""What every CLI command shares: the two consoles, one-line failures, the error guard.

Every error a user can cause or meet ends in one clear message and a non-zero exit code,
never a traceback (set WIKIREACT_DEBUG=1 to see one).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.text import Text

from wikireact.cli.display import CliConsole, clean
from wikireact.context import env_flag
from wikireact.errors import WikireactError, cli_message

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

console = CliConsole()
errors = CliConsole(stderr=True)


def thread_config(thread_id: str) -> RunnableConfig:
    """Return the LangGraph config that selects a thread."""
    return {"configurable": {"thread_id": thread_id}}


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `message` to stderr (literally, cleaned of control characters) and exit with `code`."""
    errors.print(Text.assemble(("error:", "bold red"), " ", clean(message)))
    raise typer.Exit(code)


def pause_gc() -> None:
    """Pause Python's cyclic garbage collector while a command starts (`resume_gc` ends it).

    A command's start imports LangGraph, LangChain and wikireact: objects that live as long
    as the process, which the collector would traverse again and again for nothing (about
    a seventh of `ask`'s CPU before its first step, bench/startup.py). `guard` resumes it
    when the command ends, however it ends.
    """
    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def resume_gc(*, started: bool = False) -> None:
    """Turn the collector back on if `pause_gc` turned it off.

    With `started` (the command has started: an episode is about to run) in the
    `wikireact` process itself (`main`), the objects made so far, which live until it
    exits, are left out of every later collection (`gc.freeze`).
    """
    global _gc_paused
    if started and cli_process:
        gc.freeze()
    if _gc_paused:
        gc.enable()
        _gc_paused = False


_gc_paused = False
cli_process = False
"""Whether this process is the `wikireact` command (set by its `main`)."""


def debug_enabled() -> bool:
    """Whether WIKIREACT_DEBUG asks for tracebacks (an unreadable value counts as no)."""
    try:
        return env_flag("WIKIREACT_DEBUG")
    except ValueError:
        return False


def guard(command: Callable[..., None]) -> Callable[..., None]:
    """Turn unexpected exceptions into one line (tracebacks only with WIKIREACT_DEBUG=1).

    A garbage collector the command paused (`pause_gc`) is on again when it returns.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except WikireactError as exc:
            fail(cli_message(exc))
        except Exception as exc:
            if debug_enabled():
                raise
            fail(f"unexpected {type(exc).__name__}: {exc} (set WIKIREACT_DEBUG=1 for details)", 1)
        finally:
            resume_gc()

    return wrapper
