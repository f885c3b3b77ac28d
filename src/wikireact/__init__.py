"""wikireact: the ReAct agent (Reason + Act, Yao et al. 2022) over Wikipedia as a LangGraph graph.

The names in `__all__` are loaded on first use (a module `__getattr__`), so importing
`wikireact`, `wikireact.errors` or `wikireact.context` does not import LangGraph, and the
command line starts without it. Submodules stay modules: `import wikireact.graph` and
`from wikireact import graph` both give the module `wikireact.graph`, whose `graph` is the
compiled graph that `langgraph.json` serves (`from wikireact.graph import graph`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wikireact.context import Context
    from wikireact.graph import build_graph, builder
    from wikireact.protocol import Action, FormatError, parse_action, parse_output
    from wikireact.scripted import ScriptedChatModel
    from wikireact.wiki.base import Disambiguation, Page, WikiSource, WikiUnavailableError
    from wikireact.wiki.memory import MemorySource

_EXPORTS = {
    "Action": "wikireact.protocol",
    "Context": "wikireact.context",
    "Disambiguation": "wikireact.wiki.base",
    "FormatError": "wikireact.protocol",
    "MemorySource": "wikireact.wiki.memory",
    "Page": "wikireact.wiki.base",
    "ScriptedChatModel": "wikireact.scripted",
    "WikiSource": "wikireact.wiki.base",
    "WikiUnavailableError": "wikireact.wiki.base",
    "build_graph": "wikireact.graph",
    "builder": "wikireact.graph",
    "parse_action": "wikireact.protocol",
    "parse_output": "wikireact.protocol",
}
"""Each public name and the module that defines it."""

__all__ = [
    "Action",
    "Context",
    "Disambiguation",
    "FormatError",
    "MemorySource",
    "Page",
    "ScriptedChatModel",
    "WikiSource",
    "WikiUnavailableError",
    "build_graph",
    "builder",
    "parse_action",
    "parse_output",
]


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (then it is a plain attribute)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'wikireact' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """List the public names with the attributes already loaded."""
    return sorted({*globals(), *_EXPORTS})
