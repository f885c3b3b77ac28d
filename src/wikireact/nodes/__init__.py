"""The four nodes of the ReAct graph: reason, parse, act, observe."""

from wikireact.nodes.act import act
from wikireact.nodes.observe import observe
from wikireact.nodes.parse import parse
from wikireact.nodes.reason import reason

__all__ = ["act", "observe", "parse", "reason"]
