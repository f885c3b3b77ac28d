"""`wikireact eval report DIR... [--paper] [--wide] [--plot FILE] [--html FILE]`."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from wikireact.eval.fever_report import confusion_table
from wikireact.eval.report import categories_tables, comparison_tables
from wikireact.eval.report_statistics import statistics_tables
from wikireact.eval.runs import load_runs


def eval_report(
    directories: list[str],
    *,
    console: Console,
    paper: bool = False,
    wide: bool = False,
    plot: Path | None = None,
    html: Path | None = None,
) -> None:
    """Print the comparison, category and statistics tables of runs; write the plot and page asked for.

    Each task's runs get their own tables (HotpotQA and FEVER are never mixed); FEVER runs
    add their confusion table. A run that has not finished is reported from what it has
    recorded, marked partial.

    Raises:
        EvalError: a folder is not a finished run, or a file cannot be written (one line).
    """
    runs = load_runs([Path(d) for d in directories])
    for table in comparison_tables(runs, width=console.width, paper=paper, wide=wide):
        console.print(table)
    for table in categories_tables(runs):
        console.print(table)
    confusion = confusion_table(runs)
    if confusion is not None:
        console.print(confusion)
    for table in statistics_tables(runs):
        console.print(table)
    for run in runs:
        partial = run.report.get("partial")
        if partial:
            total = partial["total"] or "?"
            console.print(
                f"{run.directory}: partial, {partial['done']} of {total} (question, seed) "
                "pairs recorded (the run has not finished)",
                highlight=False,
                markup=False,
            )
    if plot is not None:
        from wikireact.eval.plot import write_plot

        write_plot(runs, plot, paper=paper)
        console.print(f"plot: {plot}", highlight=False, markup=False)
    if html is not None:
        from wikireact.eval.html_report import write_html

        write_html(runs, html, paper=paper)
        console.print(f"trajectory browser: {html}", highlight=False, markup=False)
