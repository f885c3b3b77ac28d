"""Evaluation datasets: HotpotQA-style JSON lists and JSONL, with the paper's sampling."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path


class DatasetError(ValueError):
    """The dataset file is missing, not UTF-8, malformed, or has invalid items."""


@dataclass(frozen=True)
class Item:
    """One question with its gold answer."""

    id: str
    question: str
    answer: str


def load_dataset(path: Path) -> list[Item]:
    """Read `[{_id?, question, answer}, ...]` JSON or one such object per JSONL line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read dataset {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"dataset {path} is not UTF-8 (byte {exc.start})") from None
    try:
        if path.suffix == ".jsonl":
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"dataset {path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(records, list) or not records:
        raise DatasetError(f"dataset {path} must be a non-empty list of questions")
    items = []
    for index, record in enumerate(records):
        if not isinstance(record, dict) or not isinstance(record.get("question"), str) \
                or not isinstance(record.get("answer"), str) or not record["question"].strip():
            raise DatasetError(f"dataset {path}: item {index} needs text fields question and answer")
        items.append(Item(str(record.get("_id", index)), record["question"].strip(), record["answer"]))
    return items


def sample(items: list[Item], limit: int | None, seed: int | None) -> list[Item]:
    """Return the paper's sample: shuffle indices with `random.Random(seed)` and keep the first `limit`."""
    indices = list(range(len(items)))
    if seed is not None:
        random.Random(seed).shuffle(indices)
    if limit is not None:
        indices = indices[:limit]
    return [items[i] for i in indices]


def file_digest(path: Path) -> str:
    """Return a short SHA-256 of the dataset file, for the report."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
