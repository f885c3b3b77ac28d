"""Run or resume one tools-protocol episode under approval, in its own process.

Usage: python audit_worker.py DB THREAD [DELAY_S]
A reviewer answers each pause from `DECISIONS` (by step). Prints the final state's
trajectory and audit as JSON. Used by test_audit.py to kill it with SIGKILL and resume.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from langgraph.types import Command
from support import PAGES, QUESTION

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.state import episode_ended
from wikireact.storage.sqlite.threads import SqliteThreads

SCRIPT: list[Any] = [
    {"tool": "search", "args": {"title": "Scott Derrickson"}, "content": "Start with Derrickson."},
    {"tool": "search", "args": {"title": "Tim Burton"}, "content": "Now the other one."},
    "I am not sure which tool to use.",
    {"tool": "lookup", "args": {"keyword": "born"}, "content": "Where was he born?"},
    {"tool": "lookup", "args": {"keyword": "Los Angeles"}, "content": "Los Angeles?"},
    {"tool": "search", "args": {"title": "Scott Derrickson"}, "content": "Back to Derrickson."},
    {"tool": "lookup", "args": {"keyword": "born"}, "content": "His birthplace."},
    {"tool": "finish", "args": {"answer": "yes"}, "content": "Both are American."},
]
DECISIONS: dict[int, Any] = {
    1: {"approve": True, "by": "alice"},
    2: {"action": {"tool": "search", "args": {"title": "Ed Wood"}}, "by": "bob"},
    4: {"reject": "not needed", "by": "carol"},
    5: True,
    6: {"approve": True, "by": "dave"},
    7: {"action": "Lookup[Denver]"},
}
CONTEXT = Context(protocol="tools", approve=True, max_steps=10)


def run(db: str, thread_id: str, delay_s: float) -> dict[str, Any]:
    """Start, resume or continue the episode to its end, answering every pause."""
    store = SqliteThreads(db)
    graph = build_graph(
        store.saver,
        model=ScriptedChatModel(outputs=SCRIPT, delay_s=delay_s),
        wiki=MemorySource(PAGES),
    )
    config: Any = {"configurable": {"thread_id": thread_id}}
    state = graph.get_state(config)
    payload: Any = {"question": QUESTION} if not state.values else None
    while True:
        if state.interrupts:
            payload = Command(resume=DECISIONS[state.interrupts[0].value["step"]])
        if payload is not None or not episode_ended(state.values):
            graph.invoke(payload, config, context=CONTEXT, durability="sync")
        state = graph.get_state(config)
        payload = None
        if episode_ended(state.values):
            break
    values = state.values
    store.close()
    return {
        "trajectory": values["trajectory"],
        "audit": values["audit"],
        "answer": values["answer"],
    }


if __name__ == "__main__":
    print(
        json.dumps(run(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 0.0))
    )
