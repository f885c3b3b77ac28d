"""`wikireact eval DATASET --method ...` (= `eval run`) and `wikireact eval report DIR...`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.text import Text

from wikireact.errors import EpisodeStoppedError
from wikireact.eval.dataset import DatasetError
from wikireact.eval.harness import EvalConfig, EvalError, run_eval
from wikireact.eval.methods import METHODS
from wikireact.eval.report import comparison_table, load_report

console = Console()
# The comparison table is wide; when output is not a terminal, do not squeeze it to 80 columns.
wide = console if console.is_terminal else Console(width=220)


def report_command(
    dirs: Annotated[list[Path], typer.Argument(metavar="DIR...", help="output directories of finished runs")],
) -> None:
    """Compare finished runs in one table (each DIR holds a report.json)."""
    from wikireact.cli.app import fail

    try:
        wide.print(comparison_table([load_report(Path(d)) for d in dirs]))
    except EvalError as exc:
        fail(str(exc))


def eval_command(
    dataset: Annotated[Path, typer.Argument(metavar="DATASET", help="HotpotQA-style .json or .jsonl questions",
                                            show_default=False)],
    method: Annotated[str, typer.Option(metavar="METHOD", help=f"one of {', '.join(METHODS)}")] = "react",
    limit: Annotated[int | None, typer.Option(metavar="N", show_default="all", help="number of questions")] = None,
    sample_seed: Annotated[int, typer.Option(help="shuffle seed; 233 with --limit 500 = the paper's sample")] = 233,
    seeds: Annotated[int, typer.Option(help="repeat every question with seeds 0..N-1")] = 1,
    concurrency: Annotated[int, typer.Option(help="questions in flight at once")] = 8,
    model: Annotated[str | None, typer.Option(
        metavar="MODEL", show_default="env WIKIREACT_MODEL, else groq:qwen/qwen3.6-27b",
        help="provider:model, local or scripted:FILE.json")] = None,
    wiki: Annotated[str, typer.Option(metavar="SOURCE", help="live, offline, record:PATH.db or PATH.db")] = "offline",
    max_steps: Annotated[int, typer.Option(help="step budget of ReAct/Act")] = 7,
    sc_samples: Annotated[int, typer.Option(help="CoT-SC samples (the paper: 21)")] = 21,
    out: Annotated[Path | None, typer.Option(metavar="DIR", show_default="eval-out/METHOD", help="output directory")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="continue an interrupted run in --out")] = False,
    offline: Annotated[bool, typer.Option("--offline", help="= --model local --wiki offline")] = False,
) -> None:
    """Evaluate a method on the HotpotQA-style questions in DATASET."""
    from wikireact.cli.app import _check_resources, fail
    from wikireact.context import Context

    if method not in METHODS:
        fail(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if offline:
        model, wiki = model or "local", "offline"
    model = model or os.environ.get("WIKIREACT_MODEL") or Context().model
    _check_resources(Context(model=model, wiki=wiki, max_steps=max_steps))
    config = EvalConfig(dataset=str(dataset.resolve()), method=method,
                        model=model, wiki=wiki, limit=limit, sample_seed=sample_seed, seeds=seeds,
                        concurrency=concurrency, max_steps=max_steps, sc_samples=sc_samples)
    out = out or Path("eval-out") / method
    columns = ("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task(f"{method}", total=None)
            report = run_eval(
                config, out, resume=resume,
                on_start=lambda total, done: progress.update(task, total=total, completed=done),
                on_record=lambda record: progress.advance(task),
            )
    except KeyboardInterrupt:
        # Episodes in flight are checkpointed after every step and finished records are
        # already on disk: stop now instead of waiting for the workers, and resume later.
        from wikireact.cli.app import errors

        errors.print(f"error: interrupted; progress is saved in {out}: "
                     "continue with the same command and --resume")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(130)
    except (EvalError, DatasetError) as exc:
        fail(str(exc))
    except EpisodeStoppedError as exc:
        fail(f"{str(exc).rstrip('.')}. Finished questions are saved in {out}: continue later with --resume", 1)
    wide.print(comparison_table([report]))
    console.print(Text(f"report: {out / 'report.json'}  trajectories: {out / 'trajectories.jsonl'}"))
