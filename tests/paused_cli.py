"""Run the `wikireact` command line with one function paused (used by `snapshot import` tests).

Usage: python paused_cli.py MODULE:NAME[.NAME] REACHED GO -- ARGS...

The first time the named function is called, the process creates the file REACHED and
waits until the file GO exists, then calls it. A test waits for REACHED, and so acts at
exactly that point: it kills or interrupts the process there, or starts another one
meanwhile, then creates GO (or not).
"""

from __future__ import annotations

import functools
import importlib
import sys
import time
from pathlib import Path
from typing import Any


def pause_at(target: str, reached: Path, go: Path) -> None:
    """Replace the function `target` (`module:Class.method`) by one that waits for `go` first."""
    module, _, names = target.partition(":")
    *path, name = names.split(".")
    owner: Any = importlib.import_module(module)
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    first = [True]

    @functools.wraps(original)
    def paused(*args: Any, **kwargs: Any) -> Any:
        if first.pop() if first else False:
            reached.touch()
            while not go.exists():
                time.sleep(0.02)
        return original(*args, **kwargs)

    setattr(owner, name, paused)


def main() -> None:
    target, reached, go, separator, *args = sys.argv[1:]
    assert separator == "--", __doc__
    pause_at(target, Path(reached), Path(go))
    from wikireact.cli.app import main as cli

    sys.argv = ["wikireact", *args]
    cli()


if __name__ == "__main__":
    main()
