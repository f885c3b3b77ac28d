"""The evaluation methods' names: all of them, those that run ReAct/Act episodes, and the agents.

Kept apart from `wikireact.eval.methods` (which imports the graph) so that `eval -h` can
list them without importing LangGraph. Every agent of `wikireact.agents.AGENTS` besides
ReAct is a method of its own name (`rewoo`, ...), run through the same harness.
"""

from __future__ import annotations

from typing import Literal, cast

from wikireact.agents import AGENTS, DEFAULT_AGENT

Method = Literal[
    "react",
    "act",
    "cot",
    "cot-sc",
    "standard",
    "react-cot-sc",
    "cot-sc-react",
    "rewoo",
    "plan-execute",
    "reflexion",
    "lats",
]
BASELINE_METHODS: tuple[Method, ...] = (
    "react",
    "act",
    "cot",
    "cot-sc",
    "standard",
    "react-cot-sc",
    "cot-sc-react",
)
AGENT_METHODS: tuple[Method, ...] = tuple(
    cast(Method, name) for name in AGENTS if name != DEFAULT_AGENT
)
"""Methods that run another agent's episodes: each registered agent but ReAct, by its name."""
METHODS: tuple[Method, ...] = BASELINE_METHODS + AGENT_METHODS
EPISODE_METHODS: tuple[Method, ...] = ("react", "act", "react-cot-sc", "cot-sc-react")
"""Methods that run ReAct/Act episodes (where the protocol matters)."""


def agent_of(method: str) -> str:
    """Return the agent whose graph runs `method`'s episodes (`react` for ReAct, Act and the mixes)."""
    return method if method in AGENT_METHODS else DEFAULT_AGENT
