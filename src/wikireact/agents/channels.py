"""The delta channels a thread of an agent may hold: what pruning needs to write them whole.

`wikireact.storage.retention` prunes threads without knowing the agents (storage sits
below them); its callers pass `agent_channels`, which builds the agents' graphs once.
"""

from __future__ import annotations

import functools
from typing import Any

from wikireact.agents import AGENTS, load_agent
from wikireact.storage.materialise import delta_channels


@functools.cache
def agent_channels(agent: str) -> dict[str, Any]:
    """Return the delta channels of `agent`'s graph, then (for names it lacks) the other agents'.

    A Reflexion thread holds its trials' ReAct checkpoints too, in their own namespaces.
    """
    order = [agent, *(name for name in AGENTS if name != agent)] if agent in AGENTS else AGENTS
    return delta_channels(load_agent(name).build_graph() for name in order)
