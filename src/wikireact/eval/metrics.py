"""Aggregate per-question records into the evaluation's metrics (per seed, then across seeds)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from wikireact.eval.categories import categorize, count_categories
from wikireact.eval.fever_metrics import FEVER_METRICS, confusion, fever_seed_metrics, label_counts
from wikireact.eval.supporting_facts import FEVER_EVIDENCE_METRICS, SP_METRICS

METRICS = [
    "em",
    "f1",
    "finish_rate",
    "invalid_action_rate",
    "wiki_requests_per_question",
    "mean_steps",
    "input_tokens",
    "output_tokens",
    "model_calls",
    "latency_mean_s",
    "latency_p95_s",
    "step_model_mean_s",
    "step_model_p95_s",
    "step_wiki_mean_s",
    "step_wiki_p95_s",
    "budget_exhausted_rate",
    "repetition_halted_rate",
    "unsupported_finish_rate",
    "switch_rate",
]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(int(round(0.95 * len(ordered))) - 1, 0)] if ordered else 0.0


def seed_metrics(records: list[dict[str, Any]]) -> dict[str, float]:
    """Return the metrics of one seed's records."""
    steps = sum(r["steps"] for r in records)
    judged = [r for r in records if r["supported"] is not None]
    return {
        "questions": float(len(records)),
        "em": _mean([r["em"] for r in records]),
        "f1": _mean([r["f1"] for r in records]),
        "finish_rate": _mean([float(r["answer"] is not None) for r in records]),
        "invalid_action_rate": (sum(r["invalid_steps"] for r in records) / steps) if steps else 0.0,
        "wiki_requests_per_question": _mean([r["wiki_requests"] for r in records]),
        "mean_steps": _mean([r["steps"] for r in records]),
        "input_tokens": _mean([r["input_tokens"] for r in records]),
        "output_tokens": _mean([r["output_tokens"] for r in records]),
        "model_calls": _mean([r["model_calls"] for r in records]),
        "latency_mean_s": _mean([r["latency_s"] for r in records]),
        "latency_p95_s": _p95([r["latency_s"] for r in records]),
        **_step_times(records, "model", "model_seconds_per_step"),
        **_step_times(records, "wiki", "wiki_seconds_per_step"),
        "budget_exhausted_rate": _mean([float(r["status"] == "budget_exhausted") for r in records]),
        "repetition_halted_rate": _mean(
            [float(r["status"] == "repetition_halted") for r in records]
        ),
        "unsupported_finish_rate": _mean([float(not r["supported"]) for r in judged]),
        "switch_rate": _mean([float(r["switched"]) for r in records]),
    }


def sp_seed_metrics(records: list[dict[str, Any]]) -> dict[str, float]:
    """Return the supporting-fact metrics (`SP_METRICS`), averaged over records with gold facts."""
    scored = [r for r in records if "sp_em" in r]
    return {name: _mean([r[name] for r in scored]) for name in SP_METRICS}


def evidence_seed_metrics(records: list[dict[str, Any]]) -> dict[str, float]:
    """Return FEVER's evidence recalls (`FEVER_EVIDENCE_METRICS`) over claims with gold sentences."""
    scored = [r for r in records if "evidence_recall" in r]
    return {name: _mean([r[name] for r in scored]) for name in FEVER_EVIDENCE_METRICS}


def sp_by_category(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Return, per error category, the records with gold facts and their mean `SP_METRICS`."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if "sp_em" in record:
            groups.setdefault(str(record.get("category") or categorize(record)), []).append(record)
    return {
        category: {"questions": float(len(rs)), **sp_seed_metrics(rs)}
        for category, rs in groups.items()
    }


def _step_times(records: list[dict[str, Any]], name: str, key: str) -> dict[str, float]:
    """Return the mean and p95 wall time per step of `name` (model or wiki) over the records' steps."""
    times = [float(t) for r in records for t in r.get(key) or []]
    return {f"step_{name}_mean_s": _mean(times), f"step_{name}_p95_s": _p95(times)}


def summarize(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Per-seed metrics, their mean and standard deviation across seeds, and category counts.

    `categories` counts the error categories over all records (questions x seeds);
    `categories_per_seed` per seed, where each seed's counts sum to its questions. FEVER
    records add accuracy and per-label precision/recall (`FEVER_METRICS`), `confusion`
    (gold -> predicted, all seeds) and `labels` (the gold labels of one seed's sample).
    Data with HotpotQA's `supporting_facts` add `SP_METRICS` (`wikireact.eval.supporting_facts`)
    and `sp_by_category` (those metrics per error category, all seeds).
    """
    by_seed: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        by_seed.setdefault(record["seed"], []).append(record)
    fever = any(r.get("task") == "fever" for rs in by_seed.values() for r in rs)
    facts = any("sp_em" in r for rs in by_seed.values() for r in rs)
    evidence = any("evidence_recall" in r for rs in by_seed.values() for r in rs)
    per_seed = {
        seed: seed_metrics(rs)
        | (fever_seed_metrics(rs) if fever else {})
        | (sp_seed_metrics(rs) if facts else {})
        | (evidence_seed_metrics(rs) if evidence else {})
        for seed, rs in sorted(by_seed.items())
    }
    mean, std = {}, {}
    names = METRICS + (FEVER_METRICS if fever else []) + (SP_METRICS if facts else [])
    for name in names + (FEVER_EVIDENCE_METRICS if evidence else []):
        values = [m[name] for m in per_seed.values()]
        mean[name] = _mean(values)
        std[name] = statistics.stdev(values) if len(values) > 1 else 0.0
    summary = {
        "per_seed": {str(k): v for k, v in per_seed.items()},
        "mean": mean,
        "std": std,
        "categories": count_categories(r for rs in by_seed.values() for r in rs),
        "categories_per_seed": {str(k): count_categories(rs) for k, rs in sorted(by_seed.items())},
    }
    if facts:  # a search miss shows in sp_seen_recall, a reasoning miss in sp_f1 beside it
        summary["sp_by_category"] = sp_by_category(r for rs in by_seed.values() for r in rs)
    if fever:
        summary["confusion"] = confusion(r for rs in by_seed.values() for r in rs)
        summary["labels"] = label_counts(by_seed[min(by_seed)] if by_seed else [])
    return summary
