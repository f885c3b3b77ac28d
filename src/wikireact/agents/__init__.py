"""The agents of the ReAct family, beside ReAct itself.

ReAct is the design card's agent: its graph is `wikireact.graph` and its four nodes are
`wikireact.nodes`, at the top of the package. Further agents (each a LangGraph graph with its
own nodes and typed state) live in this package, one subpackage each, and reuse everything
below them: the Wikipedia environment (`wikireact.wiki`), the models (`wikireact.models`),
the checkpoint databases (`wikireact.storage`), and what every episode shares
(`wikireact.episode`: the door of a run, the kept context, approval, the audit trail).

`AGENTS` names, per agent, the module whose `graph` is its served graph and whose
`build_graph` compiles it.
"""

from __future__ import annotations

AGENTS: dict[str, str] = {"react": "wikireact.graph"}
"""Each agent's name (`--agent`) and the module that builds its graph."""
