"""HotpotQA's supporting-fact metrics, as its official evaluator (`hotpot_evaluate_v1.py`) defines them.

Supporting facts are `(title, sentence index)` pairs. Per question: `sp_em` is 1 when the
predicted set equals the gold set; precision, recall and `sp_f1` are over the two sets
(no overlap, or an empty side, gives 0); the joint scores multiply the answer's precision
and recall (token F1's, 0 for a differing yes/no) by the facts': `joint_f1` from those,
`joint_em = em * sp_em`. Averages are over questions.

The predicted facts are the answer's citations whose page and index are known.
`sp_seen_recall` is not the evaluator's: the share of gold facts the environment ever
showed (a low one means a search miss, a high one with a low `sp_f1` a reasoning miss).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from wikireact.evidence.cite import shown_in
from wikireact.protocols.scoring import normalize_answer

Fact = tuple[str, int]
SP_METRICS = ["sp_em", "sp_f1", "joint_em", "joint_f1", "sp_seen_recall"]
FEVER_EVIDENCE_METRICS = ["evidence_recall", "evidence_seen_recall"]
"""FEVER claims with gold evidence sentences: the share of them the answer cites, and the share
any observation showed (the same idea as `sp_seen_recall`)."""
_SPECIAL = {"yes", "no", "noanswer"}


def fact_set(facts: Iterable[Any]) -> set[Fact]:
    """Return `[[title, index], ...]` (or citations) as a set of pairs, skipping malformed ones."""
    out: set[Fact] = set()
    for fact in facts:
        if isinstance(fact, Mapping):
            fact = (fact.get("title"), fact.get("sentence_index"))
        if (
            isinstance(fact, list | tuple)
            and len(fact) == 2
            and isinstance(fact[0], str)
            and isinstance(fact[1], int)
            and not isinstance(fact[1], bool)
        ):
            out.add((fact[0], fact[1]))
    return out


def sp_scores(predicted: Iterable[Any], gold: Iterable[Any]) -> tuple[float, float, float, float]:
    """Return (em, precision, recall, f1) of predicted facts against gold ones (the official `update_sp`)."""
    pred, ref = fact_set(predicted), fact_set(gold)
    tp, fp, fn = len(pred & ref), len(pred - ref), len(ref - pred)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return float(fp + fn == 0), precision, recall, f1


def answer_scores(prediction: str | None, gold: str) -> tuple[float, float, float, float]:
    """Return (em, precision, recall, f1) of an answer (the official `update_answer`)."""
    pred, ref = normalize_answer(prediction or ""), normalize_answer(gold)
    em = float(pred == ref)
    if (pred in _SPECIAL or ref in _SPECIAL) and pred != ref:
        return em, 0.0, 0.0, 0.0
    common = Counter(pred.split()) & Counter(ref.split())
    same = sum(common.values())
    if same == 0:
        return em, 0.0, 0.0, 0.0
    precision, recall = same / len(pred.split()), same / len(ref.split())
    return em, precision, recall, 2 * precision * recall / (precision + recall)


def joint_scores(
    prediction: str | None, gold: str, predicted: Iterable[Any], facts: Iterable[Any]
) -> dict[str, float]:
    """Return one question's `sp_em`, `sp_f1`, `joint_em` and `joint_f1` (official definitions)."""
    em, precision, recall, _ = answer_scores(prediction, gold)
    sp_em, sp_precision, sp_recall, sp_f1 = sp_scores(predicted, facts)
    joint_precision, joint_recall = precision * sp_precision, recall * sp_recall
    total = joint_precision + joint_recall
    return {
        "sp_em": sp_em,
        "sp_f1": sp_f1,
        "joint_em": em * sp_em,
        "joint_f1": 2 * joint_precision * joint_recall / total if total else 0.0,
    }


def seen_recall(trajectory: Sequence[Mapping[str, Any]], facts: Iterable[Any]) -> float:
    """Return the share of gold facts some observation of `trajectory` showed (0 without facts)."""
    gold = fact_set(facts)
    shown = {(s["title"], s["sentence_index"]) for _, s in shown_in(trajectory)}
    return len(gold & shown) / len(gold) if gold else 0.0


def record_scores(
    answer: str | None,
    gold: str,
    episode: Mapping[str, Any],
    facts: Sequence[Any],
    task: str = "hotpotqa",
) -> dict[str, float]:
    """Return a record's supporting-fact metrics; none when the item has no gold facts.

    HotpotQA: `SP_METRICS`; FEVER: `FEVER_EVIDENCE_METRICS`. The episode's citations are the predicted facts when its answer is the record's (not when
    a CoT-SC vote answered instead).
    """
    if not fact_set(facts):
        return {}
    cited = (episode.get("citations") or []) if episode.get("answer") == answer else []
    trajectory = episode.get("trajectory") or []
    if task == "fever":
        gold_facts = fact_set(facts)
        return {
            "evidence_recall": len(fact_set(cited) & gold_facts) / len(gold_facts),
            "evidence_seen_recall": seen_recall(trajectory, facts),
        }
    scores = joint_scores(answer, gold, cited, facts)
    return scores | {"sp_seen_recall": seen_recall(trajectory, facts)}
