"""The ReAct paper's reference figures (Yao et al. 2022, Table 1), shown beside our runs."""

from __future__ import annotations

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
PAPER_LABEL = f"paper ({PAPER_MODEL})"
PAPER_NOTE = (
    f"paper rows: {PAPER_SOURCE} with {PAPER_MODEL}, a different model; 500 dev questions, EM only"
)
