"""Selection: walk down from the root by UCT to the leaf to expand next.

UCT(child) = Q + w * sqrt(ln N(parent) / N(child)), Q the mean backpropagated reward
(total / visits). A child never visited scores its value (the value function's estimate),
as in the LATS paper's code: a visited branch keeps its exploration bonus, and an unvisited
sibling valued above its UCT is tried next. Ties go to the higher value, then the older
node. Terminal nodes (an ended episode) are never expanded, and a subtree whose every
leaf is terminal is skipped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from wikireact.agents.lats.state import NodeStats, TreeNode
from wikireact.agents.lats.tree import children, is_terminal, stats_of


def uct(child: NodeStats | None, parent_visits: int, weight: float) -> float:
    """Return a child's UCT score (its value when it was never visited)."""
    if child is None:
        return 0.0
    if child["visits"] == 0:
        return child["value"]
    mean = child["total"] / child["visits"]
    return mean + weight * math.sqrt(math.log(max(parent_visits, 1)) / child["visits"])


def select_leaf(
    tree: Sequence[TreeNode], stats: Mapping[str, NodeStats], weight: float
) -> int | None:
    """Return the leaf to expand, by UCT from the root; None when every leaf is terminal."""
    if not tree:
        return None
    kids = {node["id"]: children(tree, node["id"]) for node in tree}
    open_nodes = _open_nodes(tree, kids)
    node = 0
    if node not in open_nodes:
        return None
    while kids[node]:
        visits = (stats_of(stats, node) or {"visits": 0})["visits"]
        node = max(
            (child for child in kids[node] if child in open_nodes),
            key=lambda child: (
                uct(stats_of(stats, child), visits, weight),
                _value(stats_of(stats, child)),
                -child,
            ),
        )
    return node


def _open_nodes(tree: Sequence[TreeNode], kids: Mapping[int, list[int]]) -> set[int]:
    """Return the nodes below which some leaf can still be expanded."""
    found: set[int] = set()
    for node in reversed(tree):  # children come after their parent
        if kids[node["id"]]:
            if any(child in found for child in kids[node["id"]]):
                found.add(node["id"])
        elif not is_terminal(node):
            found.add(node["id"])
    return found


def _value(stats: NodeStats | None) -> float:
    return stats["value"] if stats is not None else 0.0
