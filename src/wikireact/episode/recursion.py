"""Room before LangGraph's recursion limit: when a node may start more work, and each agent's least limit.

LangGraph (1.2) gives a run `stop = first superstep + recursion_limit`; a node sees
`RemainingSteps` = `stop` minus its own superstep. The loop checks the limit *before* it
looks for the next tasks: a superstep numbered past `stop` raises `GraphRecursionError`
even when the graph has nothing left to run. So the run's last node must run with
`RemainingSteps` >= 1, and a node may start work whose last superstep is `n` supersteps
after its own only when `RemainingSteps` > `n` (`has_room`). Otherwise it ends the run with
status `recursion_limit`, which a run with a larger limit continues.

A new run spends superstep 0 on START (its input and first route). The door
(`wikireact.episode.admission`) refuses a limit below the agent's `MIN_RECURSION_LIMIT`
(read from its graph module, else its package, by `least_recursion_limit`), the least
limit at which a run takes one step of its work and ends with a resumable status.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from wikireact.agents import AGENTS, DEFAULT_AGENT

AGENT_LABELS = {
    "react": "ReAct",
    "rewoo": "ReWOO",
    "plan-execute": "Plan-and-Execute",
    "reflexion": "Reflexion",
}
"""How the door's message names each agent."""
REWOO_MIN_RECURSION_LIMIT = 7
"""ReWOO's least limit until its package says (START, plan, its retry, schedule, work,
schedule, solve: one round of steps), used when `wikireact.agents.rewoo` has no constant."""


def has_room(remaining_steps: int, supersteps: int) -> bool:
    """Whether work ending `supersteps` supersteps after the current one fits before the limit.

    `remaining_steps` is the node's `RemainingSteps`: the work's last node then runs with
    at least 1 left, so the run can still end there without `GraphRecursionError`.
    """
    return remaining_steps > supersteps


@dataclass(frozen=True)
class LeastLimit:
    """An agent's least `recursion_limit`, and its name for the door's message."""

    agent: str
    """The agent's label (`ReAct`, `ReWOO`, ...)."""
    limit: int


def agent_of_state(state_schema: type) -> str:
    """Return the agent (a key of `AGENTS`) whose graph keeps `state_schema`; ReAct otherwise."""
    module = state_schema.__module__
    for name, graph_module in AGENTS.items():
        package = graph_module.rpartition(".")[0]
        if name != DEFAULT_AGENT and module.startswith(f"{package}."):
            return name
    return DEFAULT_AGENT


def least_recursion_limit(agent: str) -> LeastLimit:
    """Return agent `agent`'s least limit: `MIN_RECURSION_LIMIT` of its graph module, else its package."""
    graph_module = importlib.import_module(AGENTS[agent])
    package = importlib.import_module(AGENTS[agent].rpartition(".")[0])
    fallback = REWOO_MIN_RECURSION_LIMIT if agent == "rewoo" else None
    limit = getattr(graph_module, "MIN_RECURSION_LIMIT", None)
    if limit is None:
        limit = getattr(package, "MIN_RECURSION_LIMIT", fallback)
    if not isinstance(limit, int):
        raise TypeError(f"agent {agent!r} declares no MIN_RECURSION_LIMIT")
    return LeastLimit(AGENT_LABELS.get(agent, agent), limit)
