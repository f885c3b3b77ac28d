"""HotpotQA's official answer scoring, for the evaluation (defined in `wikireact.protocols.scoring`).

The functions live below the agents, so an agent can judge an answer too (Reflexion's
evaluator compares a trial's answer with the gold one); the evaluation imports them here.
"""

from __future__ import annotations

from wikireact.protocols.scoring import (
    exact_match,
    f1_score,
    is_supported,
    is_yes_no,
    normalize_answer,
)

__all__ = ["exact_match", "f1_score", "is_supported", "is_yes_no", "normalize_answer"]
