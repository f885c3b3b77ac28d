"""wikireact: the ReAct agent (Reason + Act, Yao et al. 2022) over Wikipedia as a LangGraph graph.

The names in `__all__` are loaded on first use (a module `__getattr__`), so importing
`wikireact`, `wikireact.errors` or `wikireact.context` does not import LangGraph, and the
command line starts without it. Submodules stay modules: `import wikireact.graph` and
`from wikireact import graph` both give the module `wikireact.graph`, whose `graph` is the
compiled graph that `langgraph.json` serves (`from wikireact.graph import graph`); likewise
`wikireact.fork` is the module whose `fork` forks a step (`from wikireact.fork import fork`).

What lives where is drawn in docs/developing.md: one subpackage per concern, each
`__init__` saying which of its modules are public.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wikireact.context import Context
    from wikireact.errors import (
        BusyError,
        ConfigurationError,
        EpisodeStoppedError,
        WikiOutageError,
        WikireactError,
        WikiUnavailableError,
    )
    from wikireact.graph import build_graph, builder, run_to_end
    from wikireact.models.scripted import ScriptedChatModel
    from wikireact.protocols.text import Action, FormatError, parse_action, parse_output
    from wikireact.storage.threads import open_threads
    from wikireact.tool import compact_tool
    from wikireact.wiki.base import Disambiguation, Page, WikiSource
    from wikireact.wiki.memory import MemorySource

_EXPORTS = {
    "Action": "wikireact.protocols.text",
    "BusyError": "wikireact.errors",
    "ConfigurationError": "wikireact.errors",
    "Context": "wikireact.context",
    "Disambiguation": "wikireact.wiki.base",
    "EpisodeStoppedError": "wikireact.errors",
    "FormatError": "wikireact.protocols.text",
    "MemorySource": "wikireact.wiki.memory",
    "Page": "wikireact.wiki.base",
    "ScriptedChatModel": "wikireact.models.scripted",
    "WikiOutageError": "wikireact.errors",
    "WikiSource": "wikireact.wiki.base",
    "WikiUnavailableError": "wikireact.errors",
    "WikireactError": "wikireact.errors",
    "build_graph": "wikireact.graph",
    "builder": "wikireact.graph",
    "compact_tool": "wikireact.tool",
    "open_threads": "wikireact.storage.threads",
    "parse_action": "wikireact.protocols.text",
    "parse_output": "wikireact.protocols.text",
    "run_to_end": "wikireact.graph",
}
"""Each public name and the module that defines it."""

__all__ = [
    "Action",
    "BusyError",
    "ConfigurationError",
    "Context",
    "Disambiguation",
    "EpisodeStoppedError",
    "FormatError",
    "MemorySource",
    "Page",
    "ScriptedChatModel",
    "WikiOutageError",
    "WikiSource",
    "WikiUnavailableError",
    "WikireactError",
    "build_graph",
    "builder",
    "compact_tool",
    "open_threads",
    "parse_action",
    "parse_output",
    "run_to_end",
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
