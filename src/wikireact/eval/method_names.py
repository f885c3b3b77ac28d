"""The evaluation methods' names: all of them, and those that run ReAct/Act episodes.

Kept apart from `wikireact.eval.methods` (which imports the graph) so that `eval -h` can
list them without importing LangGraph.
"""

from __future__ import annotations

from typing import Literal

Method = Literal["react", "act", "cot", "cot-sc", "standard", "react-cot-sc", "cot-sc-react"]
METHODS: tuple[Method, ...] = (
    "react",
    "act",
    "cot",
    "cot-sc",
    "standard",
    "react-cot-sc",
    "cot-sc-react",
)
EPISODE_METHODS: tuple[Method, ...] = ("react", "act", "react-cot-sc", "cot-sc-react")
"""Methods that run ReAct/Act episodes (where the protocol matters)."""
