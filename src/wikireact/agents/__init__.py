"""The agents of the ReAct family, beside ReAct itself.

ReAct is the design card's agent: its graph is `wikireact.graph` and its four nodes are
`wikireact.nodes`, at the top of the package. Further agents (each a LangGraph graph with its
own nodes and typed state) live in this package, one subpackage each, and reuse everything
below them: the Wikipedia environment (`wikireact.wiki`), the models (`wikireact.models`),
the checkpoint databases (`wikireact.storage`), and what every episode shares
(`wikireact.episode`: the door of a run, the kept context, approval, the audit trail).

`AGENTS` names, per agent, the module whose `graph` is its served graph and whose
`build_graph` compiles it; `load_agent` imports it. Importing this package imports no
agent (`wikireact eval -h` lists the agents without loading LangGraph).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from wikireact.errors import ConfigurationError

DEFAULT_AGENT = "react"
AGENTS: dict[str, str] = {
    "react": "wikireact.graph",
    "rewoo": "wikireact.agents.rewoo.graph",
    "plan-execute": "wikireact.agents.plan_execute.graph",
    "reflexion": "wikireact.agents.reflexion.graph",
    "lats": "wikireact.agents.lats.graph",
}
"""Each agent's name (`--agent`) and the module that builds its graph."""


def served_id(name: str) -> str:
    """Return the graph id agent `name` is served under (`langgraph.json`, Studio, the SDK).

    ReAct keeps `agent`, the id it was served under before there were other agents.
    """
    return "agent" if name == DEFAULT_AGENT else name


def served_graphs() -> dict[str, str]:
    """Return every agent's served graph as `{graph id: "module:graph"}` (`wikireact studio`)."""
    return {served_id(name): f"{module}:graph" for name, module in AGENTS.items()}


def check_agent(name: str) -> str:
    """Return `name` if it names an agent; else raise `ConfigurationError` listing the agents."""
    if name not in AGENTS:
        raise ConfigurationError(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}")
    return name


def check_settings(name: str, context: Any) -> None:
    """Refuse, with one line (`ConfigurationError`), settings agent `name` cannot run with.

    The agent's graph module says which (its `check_settings`, e.g. ReWOO refuses the
    tools protocol); its graph's door checks the same, so callers that record a thread
    before running it (`wikireact ask`) check here first.
    """
    check = getattr(load_agent(name), "check_settings", None)
    if check is not None:
        check(context)


def load_agent(name: str) -> ModuleType:
    """Import and return the module of agent `name` (its `build_graph` and `graph`).

    Raises `ConfigurationError` (one line, listing the known agents) for an unknown name.
    """
    return importlib.import_module(AGENTS[check_agent(name)])
