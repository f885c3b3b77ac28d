"""FEVER's metrics: accuracy, per-label precision and recall, the confusion table, the labels drawn.

A FEVER record's answer is a label when the method gave one (episodes normalise their
Finish, Standard/CoT their `Answer:`), else what the method wrote, or None. Accuracy is
the share of records whose answer is the gold label (the paper's score; `em` holds the
same number, so every table that reads `em` reads accuracy). An answer that is no label
counts in the confusion table's `none` column.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wikireact.protocols.labels import LABELS, normalize_label

SHORT: dict[str, str] = {"SUPPORTS": "supports", "REFUTES": "refutes", "NOT ENOUGH INFO": "nei"}
"""Each label's short name in metric keys (`precision_nei`)."""
NONE = "none"
"""The confusion table's column for answers that are no label (or no answer)."""
FEVER_METRICS = [
    "accuracy",
    *(f"{kind}_{SHORT[label]}" for label in LABELS for kind in ("precision", "recall")),
]
"""The per-seed metrics a FEVER run adds (their mean and std across seeds are reported too)."""


def fever_record(record: dict[str, Any]) -> dict[str, Any]:
    """Return a FEVER method's record: marked `task: fever`, F1 = accuracy, no support check.

    Token F1 and "is the answer in an observation" mean nothing for a label.
    """
    return {**record, "task": "fever", "f1": record["em"], "supported": None}


def predicted(record: dict[str, Any]) -> str:
    """Return the label a record's answer names, or `none`."""
    answer = record.get("answer")
    return normalize_label(answer if isinstance(answer, str) else None) or NONE


def fever_seed_metrics(records: list[dict[str, Any]]) -> dict[str, float]:
    """Return accuracy and each label's precision and recall over one seed's records (0 when undefined)."""
    pairs = [(str(r["gold"]), predicted(r)) for r in records]
    out = {"accuracy": sum(g == p for g, p in pairs) / len(pairs) if pairs else 0.0}
    for label in LABELS:
        hits = sum(g == p == label for g, p in pairs)
        said = sum(p == label for _, p in pairs)
        true = sum(g == label for g, _ in pairs)
        out[f"precision_{SHORT[label]}"] = hits / said if said else 0.0
        out[f"recall_{SHORT[label]}"] = hits / true if true else 0.0
    return out


def confusion(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Return gold label -> predicted label (or `none`) -> records, every cell present."""
    table: dict[str, dict[str, int]] = {g: dict.fromkeys([*LABELS, NONE], 0) for g in LABELS}
    for record in records:
        gold = normalize_label(str(record["gold"]))
        if gold is not None:
            table[gold][predicted(record)] += 1
    return table


def label_counts(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Return how many records have each gold label (the sample's label distribution)."""
    counts: dict[str, int] = dict.fromkeys(LABELS, 0)
    for record in records:
        gold = normalize_label(str(record["gold"]))
        if gold is not None:
            counts[gold] += 1
    return counts
