"""What every CLI command shares: the two consoles, one-line failures, the error guard.

Every error a user can cause or meet ends in one clear message and a non-zero exit code,
never a traceback (set WIKIREACT_DEBUG=1 to see one).
"""

from __future__ import annotations

import functools
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


def debug_enabled() -> bool:
    """Whether WIKIREACT_DEBUG asks for tracebacks (an unreadable value counts as no)."""
    try:
        return env_flag("WIKIREACT_DEBUG")
    except ValueError:
        return False


def guard(command: Callable[..., None]) -> Callable[..., None]:
    """Turn unexpected exceptions into one line (tracebacks only with WIKIREACT_DEBUG=1)."""

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

    return wrapper
