"""`wikireact history THREAD --html FILE`: one self-contained page that steps through a thread.

The page (template `history_page.html`, made with `wikireact.html_page`: inline CSS and
JavaScript, no network) shows the question, status and answer, then one step at a time
(its thought, action, observation, approval decision and whole audit entry; previous/next,
the arrow keys, or a step from the index), the agent's own records (ReWOO's plan and
evidence, Plan-and-Execute's sub-goals, Reflexion's trials), and trees of nodes. The first
tree is the thread's checkpoints: each with its id and the exact `wikireact resume --from`
command; a checkpoint with two children is a fork, and each leaf is a branch whose steps the
page can show. A tree is a list of nodes `{id, parent, label, detail, command}`, so another
search tree (LATS') can be shown the same way. Long runs of single children are drawn as
one flat list, so a 1,000-step thread's 3,900 checkpoints nest only where they fork.

The page's address keeps what is shown (`#step=N&branch=ID&node=ID`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel

from wikireact.history import CheckpointSummary, list_checkpoints
from wikireact.html_page import fill

AGENT_RECORDS = ("plan", "evidence", "subgoals", "plans", "trials")
"""Channels holding an agent's own records, shown as they are (a trial without its steps)."""
SHOWN_APART = frozenset({"step", "kind", "thought", "observation", "approval"})
"""Fields of an audit entry shown on their own; the others are listed as the entry."""


def step_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """Return one step as the page shows it, from its audit entry (or trajectory step)."""
    action = record.get("attempted") or record.get("action") or ""
    if isinstance(action, Mapping):  # a structured action without the text it was written as
        action = (
            f"{action.get('verb')}[{', '.join(map(str, action.get('arguments', {}).values()))}]"
        )
    return {
        "step": record.get("step"),
        "kind": str(record.get("kind") or ""),
        "thought": str(record.get("thought") or ""),
        "action": str(action),
        "observation": str(record.get("observation") or ""),
        "approval": approval_text(record.get("approval")),
        "entry": [[key, _text(value)] for key, value in record.items() if key not in SHOWN_APART],
    }


def approval_text(approval: Any) -> str | None:
    """Return an approval decision in one line (None: the step needed none)."""
    if not isinstance(approval, Mapping):
        return None if approval is None else _text(approval)
    words = [str(approval.get("decision") or "decided")]
    if approval.get("by"):
        words.append(f"by {approval['by']}")
    if approval.get("original_action"):
        words.append(f"(proposed: {_text(approval['original_action'])})")
    if approval.get("note"):
        words.append(f"— {approval['note']}")
    return " ".join(words)


def branch_steps(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return a branch's steps: its audit entries, or its trajectory when it has none."""
    audit = values.get("audit") or []
    if audit:
        return [step_view(record) for record in audit]
    return [
        step_view({"step": number, **step})
        for number, step in enumerate(values.get("trajectory") or [], start=1)
    ]


def agent_records(values: Mapping[str, Any]) -> list[list[str]]:
    """Return the agent's own records (`AGENT_RECORDS`) as `[name, JSON text]` pairs."""
    shown = []
    for name in AGENT_RECORDS:
        value = values.get(name)
        if not value:
            continue
        if name == "trials":
            value = [{k: v for k, v in t.items() if k != "trajectory"} for t in value]
        shown.append([name, json.dumps(value, ensure_ascii=False, indent=1, default=str)])
    return shown


def checkpoint_tree(
    checkpoints: Sequence[CheckpointSummary], command: Callable[[str], str]
) -> list[dict[str, Any]]:
    """Return the thread's checkpoints as tree nodes, oldest first, each with its resume command."""
    return [
        {
            "id": c.checkpoint_id,
            "parent": c.parent_id,
            "label": (
                f"#{'?' if c.superstep is None else c.superstep} steps {c.steps} · "
                f"next {','.join(c.next) or '-'} · {c.status or '-'}"
            ),
            "detail": [
                ["checkpoint", c.checkpoint_id],
                ["parent", c.parent_id or "-"],
                ["superstep", "?" if c.superstep is None else str(c.superstep)],
                ["steps", str(c.steps)],
                ["next", ",".join(c.next) or "-"],
                ["status", c.status or "-"],
            ],
            "command": command(c.checkpoint_id),
        }
        for c in reversed(checkpoints)
    ]


def branch_heads(checkpoints: Sequence[CheckpointSummary]) -> list[str]:
    """Return the ids of the checkpoints nothing continues (each branch's last), newest first."""
    parents = {c.parent_id for c in checkpoints}
    return [c.checkpoint_id for c in checkpoints if c.checkpoint_id not in parents]


def page_data(
    *,
    thread_id: str,
    question: str,
    agent: str,
    settings: Mapping[str, Any],
    checkpoints: Sequence[CheckpointSummary],
    heads: Mapping[str, Mapping[str, Any]],
    command: Callable[[str], str],
) -> dict[str, Any]:
    """Return what the page shows, as JSON-ready data.

    `checkpoints` are newest first (`list_checkpoints`); `heads` maps each branch's last
    checkpoint id to the state there, the thread's current branch first; `command` gives
    the resume command of a checkpoint id. A step shared by several branches is stored once.
    """
    steps: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    branches = []
    for head, values in heads.items():
        refs = []
        for step in branch_steps(values):
            key = json.dumps(step, sort_keys=True, default=str)
            if key not in index:
                index[key] = len(steps)
                steps.append(step)
            refs.append(index[key])
        branches.append(
            {
                "head": head,
                "status": str(values.get("status") or "running"),
                "answer": values.get("answer"),
                "steps": refs,
                "records": agent_records(values),
            }
        )
    return {
        "thread": thread_id,
        "question": question,
        "agent": agent,
        "settings": [[key, _text(value)] for key, value in settings.items()],
        "steps": steps,
        "branches": branches,
        "trees": [
            {
                "title": "Checkpoints",
                "note": "A checkpoint with several children is a fork; "
                "continue from any one with its command.",
                "nodes": checkpoint_tree(checkpoints, command),
            }
        ],
    }


def thread_page(
    graph: Pregel[Any, Any, Any, Any],
    saver: BaseCheckpointSaver,
    *,
    thread_id: str,
    question: str,
    agent: str,
    settings: Mapping[str, Any],
    command: Callable[[str], str],
) -> str:
    """Return the page of `thread_id`, read through `graph` (the thread's agent) and its `saver`.

    Each branch's steps are those of the state at its last checkpoint.
    """
    checkpoints = list_checkpoints(saver, thread_id)
    thread: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    current = graph.get_state(thread)
    heads: dict[str, Mapping[str, Any]] = {}
    current_id = (current.config.get("configurable") or {}).get("checkpoint_id")
    if current_id is not None:
        heads[str(current_id)] = current.values
    for head in branch_heads(checkpoints):
        if head not in heads:
            at: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_id": head}}
            heads[head] = graph.get_state(at).values
    if current.interrupts and current_id is not None:  # shown as the branch's status
        heads[str(current_id)] = {**current.values, "status": "waiting for approval"}
    data = page_data(
        thread_id=thread_id,
        question=question,
        agent=agent,
        settings=settings,
        checkpoints=checkpoints,
        heads=heads,
        command=command,
    )
    return render_page(data)


def render_page(data: Mapping[str, Any]) -> str:
    """Return the page for `page_data`'s data."""
    template = files("wikireact").joinpath("history_page.html").read_text(encoding="utf-8")
    return fill(template, f"wikireact · thread {data['thread']}", data)


def _text(value: Any) -> str:
    """Return a value as text (non-text values as their JSON)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
