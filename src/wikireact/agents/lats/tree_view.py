"""The search tree as lines for `wikireact history`, and the checkpoint each node was made in.

Each node is one line, indented by depth under its parent: its id, depth, action, value
(the score or reward), visits, and for a terminal its verdict; the answer's branch is
marked `*`. `node_checkpoints` finds, in the thread's history, the checkpoint saved right
after each node was added: `wikireact resume THREAD --from CHECKPOINT` (or
`graph.invoke(None, snapshot.config)`) continues the search from there on a new branch
of the thread, the original staying in its history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from wikireact.agents.lats.tree import children


def tree_lines(
    values: Mapping[str, Any], checkpoints: Mapping[int, str] | None = None
) -> list[str]:
    """Return one line per node of the search in `values`, depth first, children in order."""
    tree = values.get("tree") or []
    if not tree:
        return []
    stats = values.get("stats") or {}
    path = set(values.get("path") or [])
    lines: list[str] = []
    pending = [0]
    while pending:
        node = tree[pending.pop()]
        record = stats.get(str(node["id"])) or {}
        parts = [
            f"{'  ' * node['depth']}{'*' if node['id'] in path else '-'} #{node['id']}",
            f"depth {node['depth']}",
            node["action"] or "(question)",
            f"value {record.get('value', 0.0):.2f}",
            f"visits {record.get('visits', 0)}",
        ]
        if record.get("verdict"):
            parts.append(str(record["verdict"]))
        if checkpoints and node["id"] in checkpoints:
            parts.append(f"checkpoint {checkpoints[node['id']]}")
        lines.append("  ".join(parts))
        pending.extend(reversed(children(tree, node["id"])))
    return lines


def node_checkpoints(graph: Any, config: RunnableConfig) -> dict[int, str]:
    """Return, per tree node, the id of the first checkpoint of the thread that holds it."""
    found: dict[int, str] = {}
    for snapshot in graph.get_state_history(config):  # newest first: earlier ones overwrite
        for node in range(len(snapshot.values.get("tree") or [])):
            found[node] = str(snapshot.config["configurable"]["checkpoint_id"])
    return found


def show_tree(console: Any, graph: Any, config: RunnableConfig) -> None:
    """Print the thread's search tree on a rich `console` (plain text, no markup), headed."""
    from rich.text import Text

    lines = tree_lines(graph.get_state(config).values, node_checkpoints(graph, config))
    if lines:
        console.print(Text("Search tree (* the answer's branch)", style="bold"))
        for line in lines:
            console.print(Text(line))
