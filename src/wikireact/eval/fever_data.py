"""FEVER claims in the JSON-lines form of the ReAct paper's `paper_dev.jsonl`.

One object a line: `{"id", "verifiable", "label", "claim", "evidence"}`. The id may be an
integer; the label is one of the three (any form `normalize_label` reads); the evidence is
FEVER's list of evidence sets, each a list of `[annotation id, evidence id, page, sentence]`
(page and sentence are null for NOT ENOUGH INFO claims). The pages it names become the
item's `pages`, for the error categories.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wikireact.errors import DatasetError
from wikireact.protocols.labels import LABELS_SHOWN, normalize_label

PAPER_POPULATION = 7405
"""The paper's FEVER notebook shuffles `range(7405)` (HotpotQA's dev size), not the file's
length: only the first 7,405 claims can ever be drawn."""
_BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-COLON-": ":"}


def page_title(name: str) -> str:
    """Return a FEVER page name as a title: `Nikolaj_Coster-Waldau` -> `Nikolaj Coster-Waldau`."""
    for token, char in _BRACKETS.items():
        name = name.replace(token, char)
    return " ".join(name.replace("_", " ").split())


def evidence_pages(evidence: object) -> tuple[str, ...]:
    """Return the titles of the pages FEVER's evidence sets name, once each, in order."""
    if not isinstance(evidence, list):
        return ()
    titles = [
        page_title(part[2])
        for group in evidence
        if isinstance(group, list)
        for part in group
        if isinstance(part, list) and len(part) > 2 and isinstance(part[2], str) and part[2].strip()
    ]
    return tuple(dict.fromkeys(titles))


def evidence_facts(evidence: object) -> tuple[tuple[str, int], ...]:
    """Return the (title, sentence index) pairs of every evidence set, once each, sorted."""
    if not isinstance(evidence, list):
        return ()
    facts = {
        (page_title(part[2]), part[3])
        for group in evidence
        if isinstance(group, list)
        for part in group
        if isinstance(part, list)
        and len(part) > 3
        and isinstance(part[2], str)
        and part[2].strip()
        and isinstance(part[3], int)
        and not isinstance(part[3], bool)
    }
    return tuple(sorted(facts))


def claim_fields(path: Path, index: int, record: Any) -> tuple[str, str, tuple[str, ...]]:
    """Return a FEVER record's claim, label and evidence pages; one DatasetError line if it has none."""
    if not isinstance(record, dict) or not isinstance(record.get("claim"), str):
        hint = " (a HotpotQA question? use --task hotpotqa)" if _is_question(record) else ""
        raise DatasetError(f"dataset {path}: item {index} needs a text field claim{hint}")
    if not record["claim"].strip():
        raise DatasetError(f"dataset {path}: item {index} has an empty claim")
    label = normalize_label(record.get("label") if isinstance(record.get("label"), str) else None)
    if label is None:
        raise DatasetError(
            f"dataset {path}: item {index} has label {record.get('label')!r}; "
            f"a FEVER label is {LABELS_SHOWN}"
        )
    return record["claim"].strip(), label, evidence_pages(record.get("evidence"))


def _is_question(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("question"), str)


def is_claim(record: Any) -> bool:
    """Whether a record looks like a FEVER claim (for a hint when the task is hotpotqa)."""
    return isinstance(record, dict) and isinstance(record.get("claim"), str)
