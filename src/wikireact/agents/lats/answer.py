"""The search's answer: the best terminal with an answer, its branch, and the final status.

Terminals that gave an answer (Finish) are ranked by reward (a passed verdict first),
then value, then age (the older first). Without any, the search has no answer: its
status is `budget_exhausted` when a budget stopped it (iterations, model calls, the step
budget at every leaf) and `no_answer` when every branch ended otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from wikireact.agents.lats.state import NodeStats, StopReason, TreeNode
from wikireact.agents.lats.tree import is_terminal
from wikireact.state import Status

BUDGETS: frozenset[str] = frozenset({"iterations", "calls", "depth"})


def best_terminal(tree: Sequence[TreeNode], stats: Mapping[str, NodeStats]) -> int | None:
    """Return the id of the best terminal that gave an answer (None: no terminal did)."""
    answered = [
        node["id"]
        for node in tree
        if is_terminal(node) and node["update"].get("answer") is not None
    ]

    def rank(node: int) -> tuple[float, float, int]:
        record = stats.get(str(node))
        if record is None:
            return (0.0, 0.0, -node)
        return (record["reward"] or 0.0, record["value"], -node)

    return max(answered, key=rank, default=None)


def final_status(answer: str | None, stopped_by: StopReason) -> Status:
    """Return the search's status: finished with an answer, else why it stopped."""
    if answer is not None:
        return "finished"
    return "budget_exhausted" if stopped_by in BUDGETS else "no_answer"


def depth_reached(tree: Sequence[TreeNode]) -> bool:
    """Whether some branch ended at the step budget (so the depth limit stopped the search)."""
    return any(node["status"] == "budget_exhausted" for node in tree)
