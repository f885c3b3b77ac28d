"""`verify_finish`: a Finish whose answer no observation showed is checked once before it ends.

`parse` asks `finish_check`; a Finish it returns a message for becomes an `unverified` step
whose observation is that message (a step of the budget, like any other). Finishing again
with the same answer (normalised) ends the episode (`supported: false`); a different
answer is checked again. Yes/no answers and FEVER labels are not checked: no sentence
contains them verbatim (their citations come from the Thought, see `cite`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wikireact.evidence.cite import cite, is_judgement
from wikireact.protocols.scoring import normalize_answer

UNVERIFIED = (
    "Finish[{answer}]: {answer} appears in no observation so far. "
    "Look it up, or Finish again to keep it."
)


def finish_check(trajectory: Sequence[Mapping[str, Any]], answer: str) -> str | None:
    """Return the observation that sends a Finish back, or None when it may end the episode."""
    if is_judgement(answer) or cite(trajectory, answer):
        return None
    wanted = normalize_answer(answer)
    for step in trajectory:
        action = str(step.get("action", ""))
        if step.get("kind") == "unverified" and normalize_answer(action[7:-1]) == wanted:
            return None  # the model insists: it ends, unsupported
    return UNVERIFIED.format(answer=answer)
