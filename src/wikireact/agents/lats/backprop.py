"""Backpropagation: an iteration's reward counted on the expanded node and every ancestor.

After an expansion the reward is the best of its children's values (a terminal child's
value is its reward): each node from the expanded one up to the root gains one visit and
the reward in its total, so its mean (total / visits) is what UCT exploits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from wikireact.agents.lats.state import NodeStats, TreeNode
from wikireact.agents.lats.tree import path_to


def blank_stats(value: float = 0.0) -> NodeStats:
    """Return the record of a node nothing is known about yet (the root's, at first)."""
    return NodeStats(
        value=value,
        score="",
        valued=False,
        visits=0,
        total=0.0,
        reward=None,
        verdict=None,
        judged="",
        reflection=None,
    )


def backpropagate(
    tree: Sequence[TreeNode], stats: Mapping[str, NodeStats], node: int, reward: float
) -> dict[str, NodeStats]:
    """Return the stats of `node` and its ancestors with one more visit and `reward` added."""
    updated: dict[str, NodeStats] = {}
    for step in path_to(tree, node):
        record = stats.get(str(step)) or blank_stats()
        updated[str(step)] = NodeStats(
            **{**record, "visits": record["visits"] + 1, "total": record["total"] + reward}
        )
    return updated


def iteration_reward(
    tree: Sequence[TreeNode], stats: Mapping[str, NodeStats], iteration: int
) -> float:
    """Return the best value among the children made in `iteration` (0 without any)."""
    values = [
        stats[str(node["id"])]["value"]
        for node in tree
        if node["iteration"] == iteration and str(node["id"]) in stats
    ]
    return max(values, default=0.0)
