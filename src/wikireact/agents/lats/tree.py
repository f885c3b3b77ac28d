"""Reading the search tree: a node's path, its children, and the ReAct state it stands for.

A node keeps only what its own step wrote to ReAct's state; its full state (history,
open page, Lookup cursors, the repetition rule's proposals) is its path's writes folded
with ReAct's own reducers, as LangGraph would have applied them in one episode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wikireact.agents.lats.state import NodeStats, TreeNode
from wikireact.state import append_items, append_step_numbers

APPENDED = ("trajectory", "pages_read")
"""ReAct channels whose writes append (`append_items`)."""
KEPT = (
    "page_title",
    "page_sentences",
    "lookup_cursors",
    "page_key",
    "pages_read",
    "trajectory",
    "proposals",
    "steps",
    "status",
    "answer",
)
"""The ReAct channels a node keeps of its step's writes (the step in progress is not kept)."""


def root_node() -> TreeNode:
    """Return the root: the question alone, no step taken."""
    return TreeNode(id=0, parent=None, depth=0, iteration=0, action="", status="running", update={})


def path_to(tree: Sequence[TreeNode], node: int) -> list[int]:
    """Return the node ids from the root to `node`, root first."""
    path = [node]
    while (parent := tree[path[-1]]["parent"]) is not None:
        path.append(parent)
    return path[::-1]


def children(tree: Sequence[TreeNode], node: int) -> list[int]:
    """Return the ids of `node`'s children, in the order they were made."""
    return [item["id"] for item in tree if item["parent"] == node]


def is_terminal(node: TreeNode) -> bool:
    """Whether the node's episode has ended (Finish, step budget, repetition halt)."""
    return node["status"] != "running"


def react_state(
    tree: Sequence[TreeNode], node: int, question: str, context: Mapping[str, Any]
) -> dict[str, Any]:
    """Return the ReAct state `node` stands for: its path's writes folded with ReAct's reducers."""
    state: dict[str, Any] = {
        "question": question,
        "context": dict(context),
        "status": "running",
        "steps": 0,
        "answer": None,
        "trajectory": [],
        "proposals": {},
        "pages_read": [],
        "lookup_cursors": {},
        "page_title": None,
        "page_key": None,
        "page_sentences": [],
    }
    for step in path_to(tree, node)[1:]:
        for key, value in tree[step]["update"].items():
            if key in APPENDED:
                state[key] = append_items(state[key], [value])
            elif key == "proposals":
                state[key] = append_step_numbers(state[key], [value])
            else:
                state[key] = value
    return state


def kept_update(update: Mapping[str, Any]) -> dict[str, Any]:
    """Return the part of a step's writes a node keeps (`KEPT`)."""
    return {key: update[key] for key in KEPT if key in update}


def stats_of(stats: Mapping[str, NodeStats], node: int) -> NodeStats | None:
    """Return what the search knows of `node` (None before it is evaluated)."""
    return stats.get(str(node))
