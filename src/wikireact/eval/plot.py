"""`eval report --plot FILE.png|.svg`: EM and F1 per run with error bars across seeds.

Uses matplotlib (the optional extra `wikireact[plot]`, part of `[dev]`) through its
object API only: no pyplot, no display, safe in a headless process.
"""

from __future__ import annotations

from pathlib import Path

from wikireact._extras import missing_extra
from wikireact.errors import EvalError
from wikireact.eval.paper import PAPER_EM, PAPER_MODEL
from wikireact.eval.runs import Run

FORMATS = (".png", ".svg")
BAR_WIDTH = 0.38


def write_plot(runs: list[Run], path: Path, *, paper: bool = False) -> None:
    """Draw EM and F1 (%, mean ± std across seeds) per run; the paper's EM as markers with `paper`."""
    if path.suffix.lower() not in FORMATS:
        raise EvalError(f"--plot {path}: the file must end in .png or .svg")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise EvalError(missing_extra("--plot needs", "plot")) from None
    positions = list(range(len(runs)))
    figure = Figure(figsize=(max(6.0, 1.3 * len(runs) + 2), 4.5), layout="constrained")
    axes = figure.subplots()
    for offset, key, label, color in (
        (-BAR_WIDTH / 2, "em", "EM", "#4C72B0"),
        (BAR_WIDTH / 2, "f1", "F1", "#DD8452"),
    ):
        values = [run.metric(key) or (0.0, 0.0) for run in runs]
        axes.bar(
            [p + offset for p in positions],
            [100 * mean for mean, _ in values],
            BAR_WIDTH,
            yerr=[100 * std for _, std in values],
            capsize=4,
            label=label,
            color=color,
        )
    if paper:
        marked = [
            (p, PAPER_EM[run.method])
            for p, run in zip(positions, runs, strict=True)
            if run.method in PAPER_EM
        ]
        if marked:
            axes.scatter(
                [p - BAR_WIDTH / 2 for p, _ in marked],
                [em for _, em in marked],
                marker="D",
                color="black",
                zorder=3,
                label=f"paper EM ({PAPER_MODEL}, a different model)",
            )
    axes.set_xticks(positions, [f"{run.name}\n{run.method}" for run in runs], fontsize=8)
    axes.set_ylabel("score (%), mean ± std across seeds")
    axes.set_ylim(0, 100)
    axes.set_title("wikireact evaluation: EM and F1 per run")
    axes.legend(loc="upper right", fontsize=8)
    axes.grid(axis="y", alpha=0.3)
    metadata = {"Date": None} if path.suffix.lower() == ".svg" else {}
    try:
        figure.savefig(path, metadata=metadata)
    except OSError as exc:
        raise EvalError(f"cannot write {path}: {exc.strerror or exc}") from None
