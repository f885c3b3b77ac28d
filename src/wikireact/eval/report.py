"""The comparison tables of finished runs: metrics (with the paper's rows) and error categories.

By default the metrics table has the columns that fit an 80-column terminal; `wide=True`
adds every metric (split over several tables when one would not fit). Each row names its run (folder, then model and protocol) and method.
HotpotQA and FEVER runs are never in one table: each task gets its own tables, FEVER's
scored by label accuracy (with per-label precision/recall under `wide`, and a confusion table).
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from wikireact.context import Task
from wikireact.eval.categories import CATEGORIES
from wikireact.eval.paper import PAPER_LABEL, PAPER_NOTES, PAPER_SCORES
from wikireact.eval.runs import Run, by_task
from wikireact.eval.supporting_facts import FEVER_EVIDENCE_METRICS, SP_METRICS

OPTIONAL = frozenset(SP_METRICS + FEVER_EVIDENCE_METRICS)
"""Columns shown only when some run has them (data with gold supporting facts or evidence)."""

# (header, metric key, scale, digits); the first NARROW columns are the default view, and
# --wide on a narrow display shows them in groups of NARROW.
COLUMNS = [
    ("EM", "em", 100, 1),
    ("F1", "f1", 100, 1),
    ("finish %", "finish_rate", 100, 0),
    ("steps", "mean_steps", 1, 1),
    ("invalid %", "invalid_action_rate", 100, 0),
    ("budget %", "budget_exhausted_rate", 100, 0),
    ("repeat %", "repetition_halted_rate", 100, 0),
    ("unsupp. %", "unsupported_finish_rate", 100, 0),
    ("wiki req/q", "wiki_requests_per_question", 1, 1),
    ("in tok", "input_tokens", 1, 0),
    ("out tok", "output_tokens", 1, 0),
    ("calls", "model_calls", 1, 1),
    ("lat s", "latency_mean_s", 1, 2),
    ("p95 s", "latency_p95_s", 1, 2),
    ("model s/step", "step_model_mean_s", 1, 2),
    ("switch %", "switch_rate", 100, 0),
    ("SP EM", "sp_em", 100, 1),
    ("SP F1", "sp_f1", 100, 1),
    ("joint EM", "joint_em", 100, 1),
    ("joint F1", "joint_f1", 100, 1),
    ("SP seen %", "sp_seen_recall", 100, 0),
]
FEVER_COLUMNS = [
    ("acc", "accuracy", 100, 1),
    *COLUMNS[2:5],  # finish %, steps, invalid %
    ("P sup", "precision_supports", 100, 0),
    ("R sup", "recall_supports", 100, 0),
    ("P ref", "precision_refutes", 100, 0),
    ("R ref", "recall_refutes", 100, 0),
    ("P nei", "precision_nei", 100, 0),
    ("R nei", "recall_nei", 100, 0),
    *[c for c in COLUMNS[5:] if c[1] != "unsupported_finish_rate" and c[1] not in SP_METRICS],
    ("ev. R %", "evidence_recall", 100, 0),
    ("ev. seen %", "evidence_seen_recall", 100, 0),
]
"""FEVER's columns: accuracy first (the paper's score); no F1, support check or HotpotQA
supporting facts (labels)."""
TASK_COLUMNS: dict[Task, list[tuple[str, str, int, int]]] = {
    "hotpotqa": COLUMNS,
    "fever": FEVER_COLUMNS,
}
TASK_TITLES: dict[Task, str] = {
    "hotpotqa": "wikireact evaluation",
    "fever": "wikireact evaluation: FEVER",
}
NARROW = 4
CATEGORY_HEADERS = {
    "correct": "correct",
    "search_miss": "search\nmiss",
    "repetition": "repeat",
    "budget_exhausted": "budget",
    "invalid_format": "format",
    "unsupported_finish": "unsupp.\nfinish",
    "evidence_wrong": "seen,\nwrong",
    "no_evidence_wrong": "unseen,\nwrong",
}
CATEGORY_NOTE = (
    "seen/unseen, wrong: the gold answer did/did not appear in an observation; "
    "definitions: docs/evaluation.md"
)
FEVER_CATEGORY_NOTE = (
    "seen/unseen, wrong: a wrong label after an evidence page was/was not opened; "
    "format: no label; definitions: docs/evaluation.md, FEVER"
)


def run_label(run: Run) -> Text:
    """Return the run's folder name, with its model and protocol (and `run_notes`) underneath."""
    label = Text(run.name, overflow="fold")
    label.append("\n" + run.details, style="dim")
    for note in run_notes(run):
        label.append("\n" + note, style="bold" if note.startswith("partial") else "dim")
    return label


def run_notes(run: Run) -> list[str]:
    """Return what a reader must know besides the numbers: a partial run, the file's order."""
    notes = []
    partial = run.report.get("partial")
    if isinstance(partial, dict):
        total = partial.get("total")
        notes.append(f"partial: {partial.get('done')} of {total if total else '?'} done")
    if run.settings.get("order") == "file":
        notes.append("file order, not the paper's sample")
    return notes


def _cell(run: Run, key: str, scale: float, digits: int) -> Text:
    """Return the mean, with the standard deviation across seeds underneath when there is one."""
    value = run.metric(key)
    if value is None:
        return Text("–")
    mean, std = value[0] * scale, value[1] * scale
    cell = Text(f"{mean:.{digits}f}")
    if std:
        cell.append(f"\n±{std:.{digits}f}", style="dim")
    return cell


def comparison_table(
    runs: list[Run],
    *,
    paper: bool = False,
    wide: bool = False,
    columns: list[tuple[str, str, int, int]] | None = None,
    title: str | None = None,
) -> Table:
    """One row per run: means, with ± std across seeds below; with `paper`, the paper's rows.

    The runs must share a task (`by_task`); FEVER's table shows accuracy where HotpotQA's
    shows EM and F1, and the paper's FEVER accuracy rows.
    """
    task = _one_task(runs)
    every = task_columns(runs)
    columns = columns or (every if wide else every[:NARROW])
    paper = paper and columns[0] == every[0]
    table = Table(
        title=title or TASK_TITLES[task],
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        caption=PAPER_NOTES[task] if paper else None,
    )
    table.add_column("run", overflow="fold", min_width=9)
    table.add_column("method", overflow="fold")
    table.add_column("n", justify="right", no_wrap=True)
    for header, *_ in columns:
        table.add_column(header, justify="right", no_wrap=True)
    for run in runs:
        cells = [_cell(run, key, scale, digits) for _, key, scale, digits in columns]
        table.add_row(run_label(run), run.method, f"{run.questions}×{run.seeds}", *cells)
    if paper:
        table.add_section()
        for method, score in PAPER_SCORES[task].items():
            blanks = ["" for _ in columns[1:]]
            table.add_row(
                Text(PAPER_LABEL, style="italic"),
                method,
                "500",
                f"{score:.1f}",
                *blanks,
                style="dim",
            )
    return table


def task_columns(runs: list[Run]) -> list[tuple[str, str, int, int]]:
    """Return the runs' task's columns; the supporting-fact ones only when some run has them."""
    return [
        column
        for column in TASK_COLUMNS[_one_task(runs)]
        if column[1] not in OPTIONAL or any(run.metric(column[1]) for run in runs)
    ]


def _one_task(runs: list[Run]) -> Task:
    """Return the task the runs share; raise ValueError if they mix tasks (a caller's bug)."""
    tasks = {run.task for run in runs}
    if len(tasks) > 1:
        raise ValueError("one table never mixes HotpotQA and FEVER runs: group them (by_task)")
    return tasks.pop() if tasks else "hotpotqa"


def comparison_tables(
    runs: list[Run], *, width: int, paper: bool = False, wide: bool = False
) -> list[Table]:
    """Return the comparison tables for a display `width` columns wide, one set per task.

    With `wide`, every metric goes in one table if it fits, else in several tables of a
    few metrics each (a squeezed table would cut numbers).
    """
    return [
        table
        for _, group in by_task(runs)
        for table in _task_tables(group, width=width, paper=paper, wide=wide)
    ]


def _task_tables(runs: list[Run], *, width: int, paper: bool, wide: bool) -> list[Table]:
    """Return the comparison tables of runs of one task (see `comparison_tables`)."""
    if not wide:
        return [comparison_table(runs, paper=paper)]
    whole = comparison_table(runs, paper=paper, wide=True)
    measuring = Console(width=10_000)
    if Measurement.get(measuring, measuring.options, whole).maximum <= width:
        return [whole]
    every, title = task_columns(runs), TASK_TITLES[_one_task(runs)]
    groups = [every[i : i + NARROW] for i in range(0, len(every), NARROW)]
    return [
        comparison_table(
            runs, paper=paper, columns=group, title=f"{title} ({number}/{len(groups)})"
        )
        for number, group in enumerate(groups, 1)
    ]


def categories_tables(runs: list[Run]) -> list[Table]:
    """Return the error categories table of each task's runs (never mixed)."""
    return [categories_table(group) for _, group in by_task(runs)]


def categories_table(runs: list[Run]) -> Table:
    """Questions per error category (summed over seeds); each row sums to questions × seeds."""
    fever = _one_task(runs) == "fever"
    table = Table(
        title=f"error categories ({'claims' if fever else 'questions'}, all seeds)",
        caption=FEVER_CATEGORY_NOTE if fever else CATEGORY_NOTE,
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
    )
    table.add_column("run", overflow="fold", min_width=9)
    for key in CATEGORIES:
        table.add_column(CATEGORY_HEADERS[key], justify="right", no_wrap=True)
    for run in runs:
        counts = run.categories()
        cells = [str(counts[key]) if counts else "–" for key in CATEGORIES]
        label = Text(run.name, overflow="fold")
        label.append("\n" + run.method, style="dim")
        table.add_row(label, *cells)
    return table
