"""wikireact: the ReAct agent (Reason + Act, Yao et al. 2022) over Wikipedia as a LangGraph graph."""

from wikireact.context import Context
from wikireact.graph import build_graph, builder, graph
from wikireact.protocol import Action, FormatError, parse_action, parse_output
from wikireact.scripted import ScriptedChatModel
from wikireact.wiki.base import Disambiguation, Page, WikiSource, WikiUnavailableError
from wikireact.wiki.memory import MemorySource

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
    "graph",
    "parse_action",
    "parse_output",
]
