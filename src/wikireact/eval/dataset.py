"""Evaluation datasets: HotpotQA-style JSON lists and JSONL, FEVER claims, with the paper's sampling."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from wikireact._json_text import json_lines, parse_json
from wikireact.context import Task
from wikireact.errors import DatasetError, JsonTextError
from wikireact.eval.fever_data import PAPER_POPULATION, claim_fields, evidence_facts, is_claim
from wikireact.eval.supporting_facts import fact_set

Order = Literal["paper", "file"]
"""Which questions `--limit N` takes: the paper's seeded sample, or the file's first N."""
ORDERS: tuple[Order, ...] = get_args(Order)
GROUP_FIELDS = ("type", "level")
"""HotpotQA's labels of a question (`bridge`/`comparison`, `easy`/`medium`/`hard`) that
the report breaks scores down by, when the data has them."""


@dataclass(frozen=True)
class Item:
    """One question with its gold answer (FEVER: a claim with its label)."""

    id: str
    question: str
    answer: str
    pages: tuple[str, ...] = ()
    """Titles of the pages the answer needs (HotpotQA's `supporting_facts`, FEVER's
    evidence), when given."""
    groups: tuple[tuple[str, str], ...] = ()
    """HotpotQA's `type` and `level` of the question (`GROUP_FIELDS`), those it has."""
    facts: tuple[tuple[str, int], ...] = ()
    """HotpotQA's `supporting_facts` (FEVER: its evidence sentences) as (title, sentence
    index) pairs, when given."""


def load_dataset(path: Path, task: Task = "hotpotqa") -> list[Item]:
    """Read `[{_id?, question, answer}, ...]` JSON or one such object per JSONL line.

    With `task="fever"`, FEVER's `{id, claim, label, evidence, ...}` objects instead
    (`wikireact.eval.fever_data`): the claim is the item's question and its label the answer.
    An item's id is its `_id` (FEVER: `id`) as text (`1` and `"1"` are the same id), or its
    index in the file when it has none. Ids must be unique: they name the records and the
    checkpointed threads, so a duplicate is refused with the ids and items it concerns.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read dataset {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"dataset {path} is not UTF-8 (byte {exc.start})") from None
    records = _jsonl_records(path, text) if path.suffix == ".jsonl" else _json_records(path, text)
    if not isinstance(records, list) or not records:
        raise DatasetError(f"dataset {path} must be a non-empty list of questions")
    id_field, text_field = ("id", "claim") if task == "fever" else ("_id", "question")
    items = []
    for index, record in enumerate(records):
        if task == "fever":
            text, answer, pages = claim_fields(path, index, record)
            facts = evidence_facts(record.get("evidence"))
        else:
            text, answer, pages = _question_fields(path, index, record)
            facts = tuple(sorted(fact_set(record.get("supporting_facts") or [])))
        raw_id = record.get(id_field, index)
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
            raise DatasetError(
                f"dataset {path}: item {index} has an {id_field} that is not text or a whole number"
            )
        for field in (
            id_field,
            text_field,
        ):  # they name threads and rows in PostgreSQL text columns
            if "\u0000" in str(record.get(field, "")):
                raise DatasetError(
                    f"dataset {path}: item {index} has a NUL character (U+0000) in its {field}"
                )
        items.append(Item(str(raw_id), text, answer, pages, _groups(record), facts))
    _refuse_duplicate_ids(path, items, id_field)
    return items


def _question_fields(path: Path, index: int, record: Any) -> tuple[str, str, tuple[str, ...]]:
    """Return a HotpotQA record's question, answer and supporting pages; one line if it has none."""
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("question"), str)
        or not isinstance(record.get("answer"), str)
        or not record["question"].strip()
    ):
        hint = " (a FEVER claim? use --task fever)" if is_claim(record) else ""
        raise DatasetError(
            f"dataset {path}: item {index} needs text fields question and answer{hint}"
        )
    return (
        record["question"].strip(),
        record["answer"],
        _supporting_pages(record.get("supporting_facts")),
    )


def _groups(record: Any) -> tuple[tuple[str, str], ...]:
    """Return the record's `GROUP_FIELDS` that are short, non-empty text (others are ignored)."""
    if not isinstance(record, dict):
        return ()
    return tuple(
        (field, value.strip())
        for field in GROUP_FIELDS
        if isinstance(value := record.get(field), str) and 0 < len(value.strip()) <= 40
    )


def _json_records(path: Path, text: str) -> Any:
    try:
        return parse_json(text)
    except JsonTextError as exc:
        raise DatasetError(f"dataset {path} is not valid JSON ({exc})") from None


def _jsonl_records(path: Path, text: str) -> list[Any]:
    records = []
    for number, line in json_lines(text):
        try:
            records.append(parse_json(line))
        except JsonTextError as exc:
            raise DatasetError(
                f"dataset {path} is not valid JSON (line {number}: {exc.reason})"
            ) from None
    return records


def _refuse_duplicate_ids(path: Path, items: list[Item], id_field: str = "_id") -> None:
    positions: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        positions.setdefault(item.id, []).append(index)
    duplicates = {i: p for i, p in positions.items() if len(p) > 1}
    if duplicates:
        shown = "; ".join(
            f"{i!r} (items {', '.join(map(str, p))})" for i, p in list(duplicates.items())[:5]
        )
        more = f" and {len(duplicates) - 5} more" if len(duplicates) > 5 else ""
        raise DatasetError(
            f"dataset {path}: duplicate question ids {shown}{more}; every {id_field} must be "
            f"unique (an item without {id_field} takes its index as id)"
        )


def _supporting_pages(facts: object) -> tuple[str, ...]:
    """Titles named by HotpotQA's `supporting_facts` (`[[title, sentence index], ...]`), in order."""
    if not isinstance(facts, list):
        return ()
    titles = [
        f[0] for f in facts if isinstance(f, list) and f and isinstance(f[0], str) and f[0].strip()
    ]
    return tuple(dict.fromkeys(titles))


def sample(
    items: list[Item],
    limit: int | None,
    seed: int | None,
    task: Task = "hotpotqa",
    order: Order = "paper",
) -> list[Item]:
    """Return the questions to run: the paper's sample, or with `order="file"` the first `limit`.

    The paper's sample shuffles indices with `random.Random(seed)` and keeps the first
    `limit`. HotpotQA shuffles the indices of every item. FEVER, as the paper's notebook
    does, shuffles `range(7405)` (`PAPER_POPULATION`), so only the first 7,405 claims of a
    longer file are ever drawn (a shorter file: all of its claims).
    """
    if order == "file":
        return items[:limit]
    population = len(items)
    if task == "fever" and seed is not None:
        population = min(population, PAPER_POPULATION)
    indices = list(range(population))
    if seed is not None:
        random.Random(seed).shuffle(indices)
    if limit is not None:
        indices = indices[:limit]
    return [items[i] for i in indices]


def file_digest(path: Path) -> str:
    """Return a short SHA-256 of the dataset file, for the report."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
