"""`run_eval`: run (or resume) an evaluation, in a directory or shared through PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from wikireact._extras import require
from wikireact.errors import EvalError
from wikireact.eval.harness import EvalConfig, run_in_directory
from wikireact.storage.sqlite import lock as runlock
from wikireact.wiki.base import WikiSource


def run_eval(
    config: EvalConfig,
    out: Path,
    *,
    resume: bool = False,
    model: BaseChatModel | None = None,
    wiki: WikiSource | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    db: str | None = None,
    run: str | None = None,
) -> dict[str, Any]:
    """Run (or resume) an evaluation into `out` and return its report.

    With `db` (a PostgreSQL URL) the run is shared: it lives in the database under `run`
    (default: `out`'s name) and any number of workers may join it (`shared_run`). Otherwise
    checkpoints are in `out/threads.db` and one process at a time may work in `out`.
    """
    if db is not None:
        require("postgres", "PostgreSQL threads need")
        from wikireact.eval.shared_run import run_shared_eval  # needs the postgres extra

        return run_shared_eval(
            config,
            out,
            db=db,
            run=run or out.resolve().name,
            model=model,
            wiki=wiki,
            on_record=on_record,
            on_start=on_start,
        )
    out.mkdir(parents=True, exist_ok=True)
    lock = out / "eval.lock"
    if not runlock.try_lock(lock, "eval"):
        raise EvalError(
            f"another `wikireact eval` is working in {out} right now; "
            "wait for it to end, or use another --out"
        )
    try:
        return run_in_directory(
            config,
            out,
            resume=resume,
            model=model,
            wiki=wiki,
            on_record=on_record,
            on_start=on_start,
        )
    finally:
        runlock.unlock(lock, "eval")
