"""The evaluator: did a trial succeed? And the words the reflection is told about how it ended.

With a gold answer (evaluation) a trial is `correct` on exact match after SQuAD
normalisation, as in the Reflexion paper's HotpotQA runs. Without one (`ask`) a trial
that ends with Finish is `accepted`, unless the optional self-check call says otherwise
(`rejected`); a trial that ends without Finish is `no_answer` either way.
"""

from __future__ import annotations

import re

from wikireact.agents.reflexion.state import Trial, Verdict
from wikireact.protocols.scoring import exact_match

_VERDICT = re.compile(r"verdict\s*:?\s*\**\s*(correct|incorrect)\b", re.IGNORECASE)
ENDINGS = {
    "budget_exhausted": "it used its whole step budget without giving an answer (Finish)",
    "repetition_halted": "it repeated the same action until it was stopped, without an answer",
    "recursion_limit": "it was stopped before LangGraph's recursion limit, without an answer",
}


def judge_against_gold(trial: Trial, gold: str) -> tuple[Verdict, str]:
    """Return the verdict on `trial` against the gold answer, and why in words (gold not shown)."""
    if trial["answer"] is None:
        return "no_answer", ended_without_answer(trial)
    if exact_match(trial["answer"], gold):
        return "correct", f"the answer {trial['answer']!r} is correct"
    return "wrong", f"the answer {trial['answer']!r} was judged incorrect"


def judge_without_gold(trial: Trial) -> tuple[Verdict, str]:
    """Return the verdict on `trial` before any self-check: accepted if it gave an answer."""
    if trial["answer"] is None:
        return "no_answer", ended_without_answer(trial)
    return "accepted", f"it answered {trial['answer']!r}"


def ended_without_answer(trial: Trial) -> str:
    """Say how a trial without an answer ended."""
    return ENDINGS.get(trial["status"], "it ended without an answer (Finish)")


def read_check(reply: str, answer: str) -> tuple[Verdict, str]:
    """Read a self-check reply: `rejected` only on an explicit INCORRECT verdict.

    An unreadable reply accepts the answer: a check that could not be read is no reason
    to spend another trial.
    """
    found = _VERDICT.findall(reply[:2000])
    why = " ".join(reply.split())[:300]
    if found and found[-1].lower() == "incorrect":
        return "rejected", f"a check judged the answer {answer!r} wrong: {why}"
    return "accepted", f"it answered {answer!r}, and a check accepted it"
