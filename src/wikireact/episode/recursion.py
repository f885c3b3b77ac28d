"""Room before LangGraph's recursion limit: when a node may start more work, and each agent's least limit.

LangGraph (1.2) gives a run `stop = first superstep + recursion_limit`; a node sees
`RemainingSteps` = `stop` minus its own superstep. The loop checks the limit *before* it
looks for the next tasks: a superstep numbered past `stop` raises `GraphRecursionError`
even when the graph has nothing left to run. So the run's last node must run with
`RemainingSteps` >= 1, and a node may start work whose last superstep is `n` supersteps
after its own only when `RemainingSteps` > `n` (`has_room`). Otherwise it ends the run with
status `recursion_limit`, which a run with a larger limit continues.

A new run spends superstep 0 on START (its input and first route). The door
(`wikireact.episode.admission`) refuses a limit below the agent's least limit: each agent's
graph module declares it for its state schema (`declare_least_limit`) as it is imported, so
this layer never imports the agents; a graph of an undeclared state is held to ReAct's.
"""

from __future__ import annotations

from dataclasses import dataclass

from wikireact.context import SUPERSTEPS_PER_STEP

REACT_LEAST_LIMIT = 1 + SUPERSTEPS_PER_STEP
"""ReAct's least `recursion_limit`: START, then one step whose `observe` still has a
superstep left to end the run in."""


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


_DECLARED: dict[type, LeastLimit] = {}
"""Each agent's least limit, by the state schema its graph keeps."""


def declare_least_limit(state_schema: type, agent: str, limit: int) -> None:
    """Declare the least limit of the agent (its label, e.g. `ReWOO`) whose graph keeps `state_schema`."""
    _DECLARED[state_schema] = LeastLimit(agent, limit)


def least_limit_of(state_schema: type) -> LeastLimit:
    """Return the least limit declared for `state_schema`; ReAct's for a state none declared."""
    return _DECLARED.get(state_schema, LeastLimit("ReAct", REACT_LEAST_LIMIT))
