"""The ReAct paper's reference figures (Yao et al. 2022, Table 1), shown beside our runs."""

from __future__ import annotations

from wikireact.context import Task

PAPER_MODEL = "PaLM-540B"
PAPER_SOURCE = "Yao et al. 2022 (ReAct), Table 1, HotpotQA EM"
PAPER_EM: dict[str, float] = {
    "standard": 28.7,
    "cot": 29.4,
    "cot-sc": 33.4,
    "act": 25.7,
    "react": 27.4,
    "cot-sc-react": 34.2,
    "react-cot-sc": 35.1,
}
"""HotpotQA exact match (%) per method, as our method names spell them; EM only (no F1 given)."""
PAPER_FEVER_ACCURACY: dict[str, float] = {
    "standard": 57.1,
    "cot": 56.3,
    "cot-sc": 60.4,
    "act": 58.9,
    "react": 60.9,
    "cot-sc-react": 64.6,
    "react-cot-sc": 62.0,
}
"""FEVER label accuracy (%) per method (Table 1); the supervised state of the art was 89.5."""
PAPER_LABEL = f"paper ({PAPER_MODEL})"
PAPER_NOTE = (
    f"paper rows: {PAPER_SOURCE} with {PAPER_MODEL}, a different model; 500 dev questions, EM only"
)
PAPER_FEVER_NOTE = (
    f"paper rows: Yao et al. 2022 (ReAct), Table 1, FEVER accuracy with {PAPER_MODEL}, a "
    "different model; 500 dev claims"
)
PAPER_SCORES: dict[Task, dict[str, float]] = {"hotpotqa": PAPER_EM, "fever": PAPER_FEVER_ACCURACY}
"""The paper's score per method for each task (HotpotQA EM, FEVER accuracy), in %."""
PAPER_NOTES: dict[Task, str] = {"hotpotqa": PAPER_NOTE, "fever": PAPER_FEVER_NOTE}
