"""The comparison tables of finished runs: metrics (with the paper's rows) and error categories.

By default the metrics table has the columns that fit an 80-column terminal; `wide=True`
adds every metric (split over several tables when one would not fit). Each row names its run (folder, then model and protocol) and method.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from wikireact.eval.categories import CATEGORIES
from wikireact.eval.paper import PAPER_EM, PAPER_LABEL, PAPER_NOTE
from wikireact.eval.runs import Run

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
    ("switch %", "switch_rate", 100, 0),
]
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
    "definitions: README, Evaluation"
)


def run_label(run: Run) -> Text:
    """Return the run's folder name, with its model and protocol underneath."""
    label = Text(run.name, overflow="fold")
    label.append("\n" + run.details, style="dim")
    return label


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
    title: str = "wikireact evaluation",
) -> Table:
    """One row per run: means, with ± std across seeds below; with `paper`, the paper's EM rows."""
    columns = columns or (COLUMNS if wide else COLUMNS[:NARROW])
    paper = paper and columns[0][1] == "em"
    table = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        caption=PAPER_NOTE if paper else None,
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
        for method, em in PAPER_EM.items():
            blanks = ["" for _ in columns[1:]]
            table.add_row(
                Text(PAPER_LABEL, style="italic"), method, "500", f"{em:.1f}", *blanks, style="dim"
            )
    return table


def comparison_tables(
    runs: list[Run], *, width: int, paper: bool = False, wide: bool = False
) -> list[Table]:
    """Return the comparison tables for a display `width` columns wide.

    With `wide`, every metric goes in one table if it fits, else in several tables of a
    few metrics each (a squeezed table would cut numbers).
    """
    if not wide:
        return [comparison_table(runs, paper=paper)]
    whole = comparison_table(runs, paper=paper, wide=True)
    measuring = Console(width=10_000)
    if Measurement.get(measuring, measuring.options, whole).maximum <= width:
        return [whole]
    groups = [COLUMNS[i : i + NARROW] for i in range(0, len(COLUMNS), NARROW)]
    return [
        comparison_table(
            runs, paper=paper, columns=group, title=f"wikireact evaluation ({number}/{len(groups)})"
        )
        for number, group in enumerate(groups, 1)
    ]


def categories_table(runs: list[Run]) -> Table:
    """Questions per error category (summed over seeds); each row sums to questions × seeds."""
    table = Table(
        title="error categories (questions, all seeds)",
        caption=CATEGORY_NOTE,
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
