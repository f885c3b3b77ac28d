"""HotpotQA's official answer scoring: exact match and token F1 after SQuAD normalisation."""

from __future__ import annotations

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SPECIAL = {"yes", "no", "noanswer"}


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and the articles a/an/the, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str | None, gold: str) -> float:
    """1.0 when the normalised prediction equals the normalised gold answer, else 0.0."""
    return float(normalize_answer(prediction or "") == normalize_answer(gold))


def f1_score(prediction: str | None, gold: str) -> float:
    """Token F1; 0 when either side is yes/no/noanswer and they differ (HotpotQA rule)."""
    pred, ref = normalize_answer(prediction or ""), normalize_answer(gold)
    if (pred in _SPECIAL or ref in _SPECIAL) and pred != ref:
        return 0.0
    pred_tokens, ref_tokens = pred.split(), ref.split()
    common = Counter(pred_tokens) & Counter(ref_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


def is_supported(answer: str | None, observations: list[str]) -> bool:
    """Whether the normalised answer occurs in some normalised observation of the episode."""
    normalized = normalize_answer(answer or "")
    return bool(normalized) and any(normalized in normalize_answer(o) for o in observations)


def is_yes_no(answer: str | None) -> bool:
    """Whether an answer is yes/no (which no observation can support verbatim)."""
    return normalize_answer(answer or "") in {"yes", "no"}
