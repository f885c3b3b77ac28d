"""The comparison table of one or more evaluation reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.table import Table

from wikireact.eval.harness import REPORT, EvalError

COLUMNS = [
    ("EM", "em", 100, 1), ("F1", "f1", 100, 1), ("finish %", "finish_rate", 100, 0),
    ("invalid %", "invalid_action_rate", 100, 0), ("wiki req/q", "wiki_requests_per_question", 1, 1),
    ("steps", "mean_steps", 1, 1), ("in tok", "input_tokens", 1, 0), ("out tok", "output_tokens", 1, 0),
    ("calls", "model_calls", 1, 1), ("lat s", "latency_mean_s", 1, 2), ("p95 s", "latency_p95_s", 1, 2),
    ("budget %", "budget_exhausted_rate", 100, 0), ("repeat %", "repetition_halted_rate", 100, 0),
    ("unsupp. %", "unsupported_finish_rate", 100, 0),
]


def load_report(directory: Path) -> dict[str, Any]:
    """Read `DIR/report.json`."""
    path = directory / REPORT
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise EvalError(f"no {REPORT} in {directory} (did the run finish?)") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise EvalError(f"cannot read {path}: {exc}") from None


def comparison_table(reports: list[dict[str, Any]]) -> Table:
    """One row per report (method): mean ± std across seeds."""
    table = Table(title="wikireact evaluation")
    table.add_column("method")
    table.add_column("n")
    for title, *_ in COLUMNS:
        table.add_column(title, justify="right")
    for report in reports:
        settings, metrics = report["settings"], report["metrics"]
        n = int(next(iter(metrics["per_seed"].values()))["questions"]) if metrics["per_seed"] else 0
        cells = []
        for _, key, scale, digits in COLUMNS:
            mean, std = metrics["mean"][key] * scale, metrics["std"][key] * scale
            cells.append(f"{mean:.{digits}f}" + (f"±{std:.{digits}f}" if std else ""))
        table.add_row(settings["method"], f"{n}×{settings['seeds']}", *cells)
    return table
