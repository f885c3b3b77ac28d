"""`eval report --plot FILE.png|.svg`: EM and F1 per run with error bars across seeds.

FEVER runs plot their label accuracy (one bar each); one plot never mixes the two tasks.

Uses matplotlib (the optional extra `wikireact[plot]`, part of `[dev]`) through its
object API only: no pyplot, no display, safe in a headless process.
"""

from __future__ import annotations

from pathlib import Path

from wikireact._extras import missing_extra
from wikireact.errors import EvalError
from wikireact.eval.paper import PAPER_MODEL, PAPER_SCORES
from wikireact.eval.runs import Run, by_task

FORMATS = (".png", ".svg")
BAR_WIDTH = 0.38
PAPER_SAMPLE = 500
"""Questions (FEVER: claims) per method behind the paper's scores."""


def sample_size(run: Run) -> str:
    """Return the run's questions as `n=53` (`n=53×3` with seeds), to read beside the paper's 500."""
    seeds = f"×{run.seeds}" if run.seeds > 1 else ""
    partial = " (partial)" if run.report.get("partial") else ""
    return f"n={run.questions}{seeds}{partial}"


def write_plot(runs: list[Run], path: Path, *, paper: bool = False) -> None:
    """Draw EM and F1 (%, mean ± std across seeds) per run; the paper's EM as markers with `paper`."""
    if path.suffix.lower() not in FORMATS:
        raise EvalError(f"--plot {path}: the file must end in .png or .svg")
    groups = by_task(runs)
    if len(groups) > 1:
        raise EvalError("--plot draws runs of one task: give HotpotQA and FEVER runs separately")
    fever = bool(groups) and groups[0][0] == "fever"
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise EvalError(missing_extra("--plot needs", "plot")) from None
    positions = list(range(len(runs)))
    figure = Figure(figsize=(max(6.0, 1.3 * len(runs) + 2), 4.5), layout="constrained")
    axes = figure.subplots()
    bars = (
        [(-BAR_WIDTH / 2, "accuracy", "accuracy", "#4C72B0")]
        if fever
        else [(-BAR_WIDTH / 2, "em", "EM", "#4C72B0"), (BAR_WIDTH / 2, "f1", "F1", "#DD8452")]
    )
    scores = PAPER_SCORES["fever" if fever else "hotpotqa"]
    for offset, key, label, color in bars:
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
            (p, scores[run.method])
            for p, run in zip(positions, runs, strict=True)
            if run.method in scores
        ]
        if marked:
            axes.scatter(
                [p - BAR_WIDTH / 2 for p, _ in marked],
                [em for _, em in marked],
                marker="D",
                color="black",
                zorder=3,
                label=f"paper {'accuracy' if fever else 'EM'} ({PAPER_MODEL}, a different "
                f"model; n={PAPER_SAMPLE})",
            )
    axes.set_xticks(
        positions, [f"{run.name}\n{run.method}\n{sample_size(run)}" for run in runs], fontsize=8
    )
    axes.set_ylabel("score (%), mean ± std across seeds")
    axes.set_ylim(0, 100)
    axes.set_title(
        "wikireact evaluation: FEVER accuracy per run"
        if fever
        else "wikireact evaluation: EM and F1 per run"
    )
    axes.legend(loc="upper right", fontsize=8)
    axes.grid(axis="y", alpha=0.3)
    metadata = {"Date": None} if path.suffix.lower() == ".svg" else {}
    try:
        figure.savefig(path, metadata=metadata)
    except OSError as exc:
        raise EvalError(f"cannot write {path}: {exc.strerror or exc}") from None
