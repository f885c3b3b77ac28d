"""The report's statistics tables: intervals per run, paired tests between runs, breakdowns.

Every number comes from the runs' per-question records (`trajectories.jsonl`). A
question's score is its mean over the run's seeds; intervals resample questions
(`wikireact.eval.statistics`: seeded, so a report repeats exactly).

- `interval_table`: EM and F1 (FEVER: accuracy) with their 95% bootstrap interval.
- `paired_table`: each pair of runs over the questions both answered: the difference
  (second minus first) with its paired bootstrap interval, the questions only one of
  them got right, and McNemar's exact p on those (runs of one seed each).
- `breakdown_table`: EM and F1 per HotpotQA `type` and `level`, when the data has them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import combinations
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from wikireact.context import Task
from wikireact.errors import EvalError
from wikireact.eval.dataset import GROUP_FIELDS
from wikireact.eval.fever_metrics import predicted
from wikireact.eval.runs import Run, by_task
from wikireact.eval.statistics import (
    CONFIDENCE,
    RESAMPLES,
    Interval,
    bootstrap_interval,
    mcnemar_exact_p,
    paired_bootstrap_interval,
)

Score = Callable[[dict[str, Any]], Any]
SCORES: dict[Task, list[tuple[str, Score]]] = {
    "hotpotqa": [("EM", lambda r: r.get("em")), ("F1", lambda r: r.get("f1"))],
    "fever": [("acc", lambda r: float(predicted(r) == str(r["gold"])))],
}
"""Each task's per-record scores (header, score); the first is right/wrong, for McNemar."""
PERCENT = f"{CONFIDENCE:.0%}"
CAPTION = (
    f"{PERCENT} intervals: percentile bootstrap over questions ({RESAMPLES} resamples, "
    "seeded); a question's score is its mean over seeds"
)


def statistics_tables(runs: list[Run]) -> list[Table]:
    """Return, per task, the interval table, the paired table and the breakdown, those that apply."""
    tables = []
    for task, group in by_task(runs):
        records = {run.directory: _records(run) for run in group}
        scored = [(run, records[run.directory]) for run in group if records[run.directory]]
        for build in (interval_table, paired_table, breakdown_table):
            table = build(task, scored)
            if table is not None:
                tables.append(table)
    return tables


def _records(run: Run) -> list[dict[str, Any]]:
    """Return the run's records, one per (question, seed) (the last of repeats), or none if unreadable."""
    try:
        return list({(r["id"], r.get("seed", 0)): r for r in run.records()}.values())
    except EvalError:
        return []


def question_scores(records: list[dict[str, Any]], score: Score) -> dict[str, list[float]]:
    """Return question id -> its scores, one per seed (a score that is not a finite number is left out)."""
    scores: dict[str, list[float]] = {}
    for record in records:
        value = score(record)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            scores.setdefault(record["id"], []).append(float(value))
    return scores


def _means(scores: dict[str, list[float]]) -> dict[str, float]:
    """Question id -> its mean score over seeds, in order of id (records come in any order)."""
    return {question: sum(scores[question]) / len(scores[question]) for question in sorted(scores)}


def _interval_cell(interval: Interval, signed: bool = False) -> Text:
    """Return the estimate (in %) with its interval underneath."""
    sign = "+" if signed else ""
    cell = Text(f"{100 * interval.estimate:{sign}.1f}")
    cell.append(f"\n[{100 * interval.low:{sign}.1f}, {100 * interval.high:{sign}.1f}]", style="dim")
    return cell


def _score_cell(records: list[dict[str, Any]], score: Score) -> Text:
    """Return the records' mean score per question with its bootstrap interval (a dash if none)."""
    means = _means(question_scores(records, score))
    return _interval_cell(bootstrap_interval(list(means.values()))) if means else Text("–")


def _table(title: str, caption: str = CAPTION) -> Table:
    return Table(title=title, caption=caption, box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)


def _run_cell(run: Run) -> Text:
    label = Text(run.name, overflow="fold")
    label.append("\n" + run.method, style="dim")
    return label


def interval_table(task: Task, scored: list[tuple[Run, list[dict[str, Any]]]]) -> Table | None:
    """One row per run: questions, and each score with its bootstrap interval."""
    if not scored:
        return None
    table = _table(f"scores with {PERCENT} confidence intervals")
    table.add_column("run", overflow="fold", min_width=9)
    table.add_column("questions", justify="right")
    for header, _ in SCORES[task]:
        table.add_column(header, justify="right", no_wrap=True)
    for run, records in scored:
        cells = [_score_cell(records, score) for _, score in SCORES[task]]
        table.add_row(_run_cell(run), str(len({r["id"] for r in records})), *cells)
    return table


def paired_table(task: Task, scored: list[tuple[Run, list[dict[str, Any]]]]) -> Table | None:
    """Each pair of runs over their common questions; None with fewer than two such runs."""
    (first_header, first_score), *_ = SCORES[task]
    table = _table(
        "paired differences on the questions both runs answered (2nd run minus 1st)",
        f"{CAPTION}; 1st/2nd only: questions only that run got right ({first_header}); "
        "p: McNemar's exact test on them (runs of one seed)",
    )
    for header in ("1st run", "2nd run"):
        table.add_column(header, overflow="fold", min_width=9)
    table.add_column("n", justify="right")
    for header, _ in SCORES[task]:
        table.add_column(f"Δ {header}", justify="right", no_wrap=True)
    table.add_column("1st\nonly", justify="right")
    table.add_column("2nd\nonly", justify="right")
    table.add_column("p", justify="right")
    for (one, one_records), (two, two_records) in combinations(scored, 2):
        firsts = question_scores(one_records, first_score)
        seconds = question_scores(two_records, first_score)
        common = sorted(firsts.keys() & seconds.keys())
        if not common:
            continue
        deltas = []
        for _, score in SCORES[task]:
            a = _means(question_scores(one_records, score))
            b = _means(question_scores(two_records, score))
            both = [q for q in common if q in a and q in b]
            if not both:
                deltas.append(Text("–"))
                continue
            difference = paired_bootstrap_interval([a[q] for q in both], [b[q] for q in both])
            deltas.append(_interval_cell(difference, signed=True))
        table.add_row(
            _run_cell(one),
            _run_cell(two),
            str(len(common)),
            *deltas,
            *_mcnemar_cells(firsts, seconds, common),
        )
    return table if table.row_count else None


def _mcnemar_cells(
    one: dict[str, list[float]], two: dict[str, list[float]], common: list[str]
) -> list[str]:
    """Return the discordant counts and McNemar's exact p; dashes unless each run has one seed."""
    if any(len(one[q]) != 1 or len(two[q]) != 1 for q in common):
        return ["–", "–", "–"]
    only_one = sum(1 for q in common if one[q][0] == 1 and two[q][0] == 0)
    only_two = sum(1 for q in common if one[q][0] == 0 and two[q][0] == 1)
    return [str(only_one), str(only_two), f"{mcnemar_exact_p(only_one, only_two):.3g}"]


def breakdown_table(task: Task, scored: list[tuple[Run, list[dict[str, Any]]]]) -> Table | None:
    """Scores per HotpotQA `type` and `level` of each run; None when no record has them."""
    table = _table(f"scores by question {' and '.join(GROUP_FIELDS)}")
    table.add_column("run", overflow="fold", min_width=9)
    table.add_column("group", overflow="fold")
    table.add_column("n", justify="right")
    for header, _ in SCORES[task]:
        table.add_column(header, justify="right", no_wrap=True)
    for run, records in scored:
        label: Text | str = _run_cell(run)  # on the run's first row only
        for field in GROUP_FIELDS:
            values = sorted({str(r[field]) for r in records if isinstance(r.get(field), str)})
            for value in values:
                chosen = [r for r in records if r.get(field) == value]
                cells = [_score_cell(chosen, score) for _, score in SCORES[task]]
                questions = str(len({r["id"] for r in chosen}))
                table.add_row(label, f"{field} {value}", questions, *cells)
                label = ""
            if values:
                table.add_section()
    return table if table.row_count else None
