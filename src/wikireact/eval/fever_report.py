"""FEVER's confusion table: per run, gold label against the label the method gave."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from wikireact.eval.fever_metrics import NONE
from wikireact.eval.runs import Run
from wikireact.protocols.labels import LABELS

HEADERS = {"SUPPORTS": "→ SUP", "REFUTES": "→ REF", "NOT ENOUGH INFO": "→ NEI", NONE: "→ none"}
NOTE = (
    "rows: gold label (all seeds); columns: the label given, none = no label; "
    "sample: the gold labels of the claims drawn"
)


def confusion_table(runs: list[Run]) -> Table | None:
    """Return the 3x3 confusion table (plus a `none` column) of the FEVER runs, or None if none."""
    fever = [run for run in runs if run.task == "fever" and run.metrics.get("confusion")]
    if not fever:
        return None
    table = Table(
        title="FEVER confusion (claims, all seeds)",
        caption=NOTE,
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
    )
    table.add_column("run", overflow="fold", min_width=9)
    table.add_column("gold")
    for key in [*LABELS, NONE]:
        table.add_column(HEADERS[key], justify="right", no_wrap=True)
    table.add_column("sample", justify="right", no_wrap=True)
    for run in fever:
        matrix, drawn = run.metrics["confusion"], run.metrics.get("labels") or {}
        for number, gold in enumerate(LABELS):
            label = Text(run.name, overflow="fold") if number == 0 else Text("")
            if number == 0:
                label.append("\n" + run.method, style="dim")
            row = matrix.get(gold) or {}
            cells = [str(int(row.get(key, 0))) for key in [*LABELS, NONE]]
            table.add_row(label, gold, *cells, str(int(drawn.get(gold, 0))))
        table.add_section()
    return table
