"""The settings ReWOO refuses: the tools protocol, at every entry, in one line.

ReWOO's plan, LLM steps and answer are text: a plan is a program of many tool calls with
evidence references, which native tool calls cannot state, so `protocol="tools"` would be
recorded with the thread without changing anything. It is refused instead, before
anything runs or is recorded: by the graph's door (`graph.RewooGraph`: the library, the
served graph, `eval`, `resume`) and by `wikireact ask` before it registers the thread
(`wikireact.agents.check_settings`).
"""

from __future__ import annotations

from wikireact.context import Context
from wikireact.errors import ConfigurationError

TOOLS_REFUSED = (
    "protocol tools does not apply to the rewoo agent: its plan, LLM steps and answer are "
    "text, not tool calls; run it with protocol text (a thread started with tools: ask "
    "the question again on a new thread)"
)


def check_settings(context: Context) -> None:
    """Raise `ConfigurationError` (one line) for settings ReWOO cannot run with."""
    if context.protocol == "tools":
        raise ConfigurationError(TOOLS_REFUSED)
