"""Finished evaluation runs read back from their folders, checked before anything uses them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wikireact._json_text import json_objects, parse_json
from wikireact.context import Task
from wikireact.errors import EvalError, JsonTextError
from wikireact.eval.categories import CATEGORIES, count_categories
from wikireact.eval.harness import RECORDS, REPORT
from wikireact.eval.partial import has_started, partial_report

REQUIRED_METRICS = ("em", "f1")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_report(path: Path, data: Any) -> dict[str, Any]:
    """Return `data` if it has the shape of a wikireact report, else raise EvalError naming the defect."""

    def bad(what: str) -> EvalError:
        return EvalError(f"{path} is not a wikireact report: {what}")

    if not isinstance(data, dict):
        raise bad("not a JSON object")
    settings, metrics = data.get("settings"), data.get("metrics")
    if not isinstance(settings, dict) or not isinstance(settings.get("method"), str):
        raise bad("settings.method is missing")
    if not isinstance(metrics, dict):
        raise bad("metrics is missing")
    for part in ("mean", "std", "per_seed"):
        if not isinstance(metrics.get(part), dict):
            raise bad(f"metrics.{part} is missing")
    for key in REQUIRED_METRICS:
        if key not in metrics["mean"]:
            raise bad(f"metrics.mean.{key} is missing")
    for part in ("mean", "std"):
        for key, value in metrics[part].items():
            if not _is_number(value):
                raise bad(f"metrics.{part}.{key} is not a number")
    for seed, values in metrics["per_seed"].items():
        if not isinstance(values, dict) or not _is_number(values.get("questions", 0)):
            raise bad(f"metrics.per_seed.{seed} is not a set of metrics")
    categories = metrics.get("categories")
    if categories is not None and (
        not isinstance(categories, dict) or not all(_is_number(v) for v in categories.values())
    ):
        raise bad("metrics.categories is not a set of counts")
    return data


@dataclass(frozen=True)
class Run:
    """One finished evaluation: its folder, its report and the label that names it in tables."""

    directory: Path
    report: dict[str, Any]
    name: str
    show_protocol: bool = True
    """Whether labels name the protocol (`load_runs`: when the runs' protocols differ or are not text)."""

    @property
    def settings(self) -> dict[str, Any]:
        """The run's recorded settings."""
        return dict(self.report["settings"])

    @property
    def metrics(self) -> dict[str, Any]:
        """The run's metrics (per seed, mean, std, categories)."""
        return dict(self.report["metrics"])

    @property
    def task(self) -> Task:
        """The run's task: `fever`, or `hotpotqa` (also for runs recorded before there was a choice)."""
        return "fever" if self.settings.get("task") == "fever" else "hotpotqa"

    @property
    def method(self) -> str:
        """The evaluated method."""
        return str(self.settings["method"])

    @property
    def details(self) -> str:
        """Model and, when recorded, protocol: what besides the folder tells runs apart."""
        model = str(self.settings.get("model") or "?")
        if model.startswith("scripted:"):  # a test script's path says little and is long
            model = "scripted:" + Path(model.removeprefix("scripted:")).name
        parts = [model]
        if self.settings.get("protocol") and self.show_protocol:
            parts.append(str(self.settings["protocol"]))
        return " · ".join(parts)

    @property
    def questions(self) -> int:
        """Questions per seed."""
        per_seed = self.metrics["per_seed"]
        return int(next(iter(per_seed.values())).get("questions", 0)) if per_seed else 0

    @property
    def seeds(self) -> int:
        """Seeds the run repeated every question with."""
        return len(self.metrics["per_seed"]) or int(self.settings.get("seeds") or 0)

    def metric(self, key: str) -> tuple[float, float] | None:
        """Mean and standard deviation across seeds of a metric, or None if not recorded."""
        mean, std = self.metrics["mean"].get(key), self.metrics["std"].get(key, 0.0)
        return None if mean is None else (float(mean), float(std))

    def records(self) -> list[dict[str, Any]]:
        """Return the per-question records of `trajectories.jsonl` (unreadable lines skipped)."""
        path = self.directory / RECORDS
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise EvalError(f"no {RECORDS} in {self.directory}") from None
        except OSError as exc:
            raise EvalError(f"cannot read {path}: {exc.strerror or exc}") from None
        return [
            record
            for record in json_objects(text)
            if isinstance(record.get("id"), str)
            and isinstance(record.get("gold"), str)
            and isinstance(record.get("seed", 0), int)
        ]

    def categories(self) -> dict[str, int] | None:
        """Category counts over all seeds: from the report, else tagged from the records, else None."""
        recorded = self.metrics.get("categories")
        if isinstance(recorded, dict):
            return {key: int(recorded.get(key, 0)) for key in CATEGORIES}
        try:
            records = self.records()
        except EvalError:
            return None
        return count_categories(records) if records else None


def load_report(directory: Path) -> dict[str, Any]:
    """Read and check `DIR/report.json` (an unfinished run: `partial_report`); errors are one line."""
    path = directory / REPORT
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if has_started(directory):  # unfinished or stopped: what it has recorded, marked partial
            return partial_report(directory)
        raise EvalError(f"no {REPORT} in {directory} (did the run finish?)") from None
    except IsADirectoryError:
        raise EvalError(f"{path} is a directory, not a report") from None
    except UnicodeDecodeError:
        raise EvalError(f"{path} is not UTF-8 text") from None
    except JsonTextError as exc:
        raise EvalError(f"{path} is not valid JSON ({exc})") from None
    except OSError as exc:
        raise EvalError(f"cannot read {path}: {exc.strerror or exc}") from None
    return check_report(path, data)


def by_task(runs: Sequence[Run]) -> list[tuple[Task, list[Run]]]:
    """Return the runs grouped by task (in order of first appearance): tables never mix tasks."""
    groups: dict[Task, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.task, []).append(run)
    return list(groups.items())


def load_runs(directories: Sequence[Path]) -> list[Run]:
    """Load every run; each is named by its folder, or by the path given when folder names clash."""
    names = [d.resolve().name or str(d) for d in directories]
    reports = [load_report(d) for d in directories]
    protocols = {str(r["settings"].get("protocol") or "text") for r in reports}
    show_protocol = protocols != {"text"}
    return [
        Run(directory, report, str(directory) if names.count(name) > 1 else name, show_protocol)
        for directory, report, name in zip(directories, reports, names, strict=True)
    ]
