"""The report of an unfinished or stopped run: what its folder has recorded so far, marked partial.

A run writes `settings.json` when it starts and appends to `trajectories.jsonl` as
questions finish; `report.json` comes only at the end. `partial_report` builds the same
report from the records there are, with `partial: {done, total}` ((question, seed) pairs).
The total comes from the dataset when its file is still there unchanged, else from `limit`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wikireact._json_text import parse_json
from wikireact.context import Task
from wikireact.errors import DatasetError, EvalError, JsonTextError
from wikireact.eval.dataset import Order, file_digest, load_dataset, sample
from wikireact.eval.harness import RECORDS, SETTINGS, read_records
from wikireact.eval.metrics import summarize


def has_started(directory: Path) -> bool:
    """Whether `directory` holds a run that has started (its settings are written first)."""
    return (directory / SETTINGS).is_file()


def partial_report(directory: Path) -> dict[str, Any]:
    """Return the report of the records `directory` holds, with `partial: {done, total}`.

    Raises:
        EvalError: the settings are unreadable, or no question has been recorded yet.
    """
    path = directory / SETTINGS
    try:
        settings = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, JsonTextError) as exc:
        raise EvalError(f"cannot read {path}: {exc}") from None
    if not isinstance(settings, dict):
        raise EvalError(f"{path} is not a JSON object")
    records = read_records(directory / RECORDS)
    wanted = _wanted(settings)
    if wanted is not None:
        records = {key: record for key, record in records.items() if key in wanted}
    if not records:
        raise EvalError(f"{directory}: the run has not finished a question yet; nothing to report")
    total = len(wanted) if wanted is not None else _total_from_limit(settings)
    return {
        "settings": settings,
        "metrics": summarize(records.values()),
        "partial": {"done": len(records), "total": total},
    }


def _wanted(settings: dict[str, Any]) -> set[tuple[str, int]] | None:
    """Return the run's (question id, seed) pairs, or None if its dataset is gone or changed."""
    dataset = settings.get("dataset")
    if not isinstance(dataset, str) or not Path(dataset).is_file():
        return None
    try:
        if file_digest(Path(dataset)) != settings.get("dataset_sha256"):
            return None
        task: Task = "fever" if settings.get("task") == "fever" else "hotpotqa"
        order: Order = "file" if settings.get("order") == "file" else "paper"
        items = sample(
            load_dataset(Path(dataset), task),
            _whole(settings.get("limit")),
            _whole(settings.get("sample_seed")),
            task,
            order,
        )
    except (OSError, DatasetError):
        return None
    seeds = _whole(settings.get("seeds")) or 1
    return {(item.id, seed) for item in items for seed in range(seeds)}


def _total_from_limit(settings: dict[str, Any]) -> int | None:
    """Return limit x seeds (an upper bound: the file may have had fewer), or None without a limit."""
    limit = _whole(settings.get("limit"))
    return None if limit is None else limit * (_whole(settings.get("seeds")) or 1)


def _whole(value: Any) -> int | None:
    """Return `value` if it is a whole number (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
