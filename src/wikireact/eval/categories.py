"""The paper's error analysis, automatic: one category per question, decided from its record.

The ReAct paper (Table 2) sorts outcomes by cause. Here every record (one question, one
method, one seed) gets the first category of `CATEGORIES` whose rule holds; docs/evaluation.md
defines each rule. The rules read the record's answer, gold answer, status and the kinds
and texts of its trajectory's steps, plus the question's supporting pages when the dataset
names them (HotpotQA's `supporting_facts`, FEVER's evidence).

FEVER records (`task: fever`) use the same categories with rules for claims
(`_claim_category`): a search miss is an episode that opened none of the evidence's pages
(none at all when the claim names none); invalid format includes an answer that is no
label; "evidence seen, wrong" is a wrong label after an evidence page (any page, when
none is named) was opened.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from wikireact.eval.scoring import exact_match, is_yes_no, normalize_answer
from wikireact.protocols.labels import normalize_label

CATEGORIES: dict[str, str] = {
    "correct": "correct",
    "search_miss": "search miss",
    "repetition": "repetition",
    "budget_exhausted": "budget exhausted",
    "invalid_format": "invalid format",
    "unsupported_finish": "unsupported finish",
    "evidence_wrong": "evidence seen, wrong answer",
    "no_evidence_wrong": "wrong without evidence",
}
"""Category id -> label, in the order the rules are applied."""

_MISS_MARKERS = ("Could not find ", "Wikipedia is unavailable right now")
_DISAMBIGUATION_MARKER = " may refer to several pages. Similar: "


def step_kind(step: dict[str, Any]) -> str:
    """Return a step's kind; records written before steps carried `kind` get it inferred."""
    kind = step.get("kind")
    if isinstance(kind, str):
        return kind
    action, observation = str(step.get("action", "")), str(step.get("observation", ""))
    if observation.startswith("Invalid action:"):
        return "invalid"
    if observation.startswith("You already did "):
        return "repeat"
    if observation.startswith("A human reviewer rejected "):
        return "rejected"
    return "finish" if action.startswith("Finish[") else "executed"


def _argument(action: str, verb: str) -> str | None:
    """Return the argument of `Verb[argument]`, or None for another verb."""
    if action.startswith(f"{verb}[") and action.endswith("]"):
        return action[len(verb) + 1 : -1]
    return None


def _title_key(title: str) -> str:
    return " ".join(title.replace("_", " ").split()).casefold()


def opened_pages(trajectory: Sequence[dict[str, Any]]) -> set[str]:
    """Titles (casefolded) that an executed Search opened: not a miss, a disambiguation or an outage."""
    opened = set()
    for step in trajectory:
        title = _argument(str(step.get("action", "")), "Search")
        observation = str(step.get("observation", ""))
        if title is None or step_kind(step) != "executed":
            continue
        if observation.startswith(_MISS_MARKERS) or _DISAMBIGUATION_MARKER in observation:
            continue
        opened.add(_title_key(title))
    return opened


def _observed(text: str, observations: list[str]) -> bool:
    """Whether `text`, normalised, occurs as whole words in some normalised observation."""
    normalized = normalize_answer(text)
    return bool(normalized) and any(
        f" {normalized} " in f" {normalize_answer(o)} " for o in observations
    )


def _search_miss(
    record: dict[str, Any],
    trajectory: list[dict[str, Any]],
    needed: Sequence[str],
    observations: list[str],
) -> bool:
    if not trajectory:
        return False  # no episode: the method never searched
    opened = opened_pages(trajectory)
    if needed:
        return any(_title_key(title) not in opened for title in needed)
    if is_yes_no(record["gold"]):
        return not opened
    return not _observed(record["gold"], observations)


def _unsupported_finish(
    record: dict[str, Any], trajectory: list[dict[str, Any]], observations: list[str]
) -> bool:
    answer = record.get("answer")
    if (
        not trajectory
        or answer is None
        or is_yes_no(answer)
        or step_kind(trajectory[-1]) != "finish"
    ):
        return False
    finish = _argument(str(trajectory[-1].get("action", "")), "Finish")
    if finish is None or normalize_answer(finish) != normalize_answer(answer):
        return False  # the answer came from elsewhere (a CoT-SC fallback)
    return not _observed(answer, observations)


def categorize(record: dict[str, Any], needed_pages: Sequence[str] = ()) -> str:
    """Return the first category (see `CATEGORIES`) whose rule holds for this record."""
    trajectory = [s for s in record.get("trajectory") or [] if isinstance(s, dict)]
    kinds = [step_kind(s) for s in trajectory]
    observations = [
        str(s.get("observation", ""))
        for s, k in zip(trajectory, kinds, strict=True)
        if k == "executed"
    ]
    answer = record.get("answer")
    if exact_match(answer, record["gold"]) == 1.0:
        return "correct"
    if record.get("task") == "fever":
        return _claim_category(record, trajectory, kinds, needed_pages)
    if _search_miss(record, trajectory, needed_pages, observations):
        return "search_miss"
    if record.get("status") == "repetition_halted":
        return "repetition"
    if record.get("status") == "budget_exhausted":
        return "budget_exhausted"
    if answer is None or (kinds and 2 * kinds.count("invalid") >= len(kinds)):
        return "invalid_format"
    if _unsupported_finish(record, trajectory, observations):
        return "unsupported_finish"
    if not is_yes_no(record["gold"]) and _observed(record["gold"], observations):
        return "evidence_wrong"
    return "no_evidence_wrong"


def _claim_category(
    record: dict[str, Any],
    trajectory: list[dict[str, Any]],
    kinds: list[str],
    evidence_pages: Sequence[str],
) -> str:
    """Return the category of a wrong FEVER record (see the module's docstring)."""
    opened = opened_pages(trajectory)
    wanted = {_title_key(title) for title in evidence_pages}
    seen = bool(opened & wanted) if wanted else bool(opened)
    answer = record.get("answer")
    if trajectory and not seen:
        return "search_miss"
    if record.get("status") == "repetition_halted":
        return "repetition"
    if record.get("status") == "budget_exhausted":
        return "budget_exhausted"
    invalid = kinds and 2 * kinds.count("invalid") >= len(kinds)
    if not isinstance(answer, str) or normalize_label(answer) is None or invalid:
        return "invalid_format"
    return "evidence_wrong" if seen else "no_evidence_wrong"


def count_categories(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Count records per category (all categories present, in order); untagged records are tagged."""
    counts = dict.fromkeys(CATEGORIES, 0)
    for record in records:
        category = record.get("category")
        counts[category if category in counts else categorize(record)] += 1
    return counts
