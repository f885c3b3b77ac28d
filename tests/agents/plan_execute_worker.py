"""Run or resume one Plan-and-Execute episode on a SQLite checkpoint file, in its own process.

Usage: python plan_execute_worker.py DB THREAD DELAY_S CALL_LOG
Each model call appends its index to CALL_LOG (one line, flushed) before the model answers.
Prints the final state's values as JSON. Used by test_plan_execute_resume.py to kill it with
SIGKILL inside a sub-goal and resume it.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from langchain_core.callbacks import CallbackManagerForLLMRun  # noqa: E402
from langchain_core.messages import BaseMessage  # noqa: E402
from langchain_core.outputs import ChatResult  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from pe_scripts import WHOLE_RUN  # noqa: E402
from support import PAGES, QUESTION  # noqa: E402

from wikireact import Context, MemorySource, ScriptedChatModel  # noqa: E402
from wikireact.agents.plan_execute.graph import build_graph  # noqa: E402
from wikireact.models.call_metadata import CALL_INDEX_KEY  # noqa: E402

CONTEXT = Context(max_steps=10)


class LoggedModel(ScriptedChatModel):
    """The scripted model, writing each call's index to a file as the call starts."""

    call_log: str = ""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        index = (getattr(run_manager, "metadata", None) or {}).get(CALL_INDEX_KEY)
        with open(self.call_log, "a", encoding="utf-8") as log:
            log.write(f"{index}\n")
        return super()._generate(messages, stop, run_manager, **kwargs)


def graph_on(conn: sqlite3.Connection, delay_s: float = 0.0, call_log: str = "") -> Any:
    """Return the Plan-and-Execute graph checkpointing to `conn`."""
    model = LoggedModel(outputs=WHOLE_RUN, delay_s=delay_s, call_log=call_log or "/dev/null")
    return build_graph(SqliteSaver(conn), model=model, wiki=MemorySource(PAGES))


def run(db: str, thread_id: str, delay_s: float, call_log: str) -> dict[str, Any]:
    """Start the episode, or continue it where it stopped (the same question), to its end."""
    conn = sqlite3.connect(db, check_same_thread=False)
    graph = graph_on(conn, delay_s, call_log)
    config: Any = {"configurable": {"thread_id": thread_id}}
    graph.invoke({"question": QUESTION}, config, context=CONTEXT, durability="sync")
    values = dict(graph.get_state(config).values)
    conn.close()
    return values


def progress(db: str, thread_id: str) -> tuple[int, int]:
    """Return (sub-goals finished, steps saved by the sub-goal in progress) of a thread."""
    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        state = graph_on(conn).get_state({"configurable": {"thread_id": thread_id}}, subgraphs=True)
    finally:
        conn.close()
    inner = next((t.state for t in state.tasks if t.name == "execute" and t.state), None)
    steps = int(getattr(inner, "values", {}).get("steps", 0)) if inner is not None else 0
    return len(state.values.get("subgoals") or []), steps


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4])))
