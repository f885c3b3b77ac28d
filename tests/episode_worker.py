"""Run or resume one scripted episode in its own process (used by checkpoint tests).

Usage: python episode_worker.py DB THREAD start|resume|fresh  (DB: a SQLite path or a PostgreSQL URL)
Prints the episode's output as JSON; exits 3 when the run paused (interrupt).
"""

from __future__ import annotations

import json
import sqlite3
import sys

from langgraph.checkpoint.sqlite import SqliteSaver
from support import GOOD_RUN, PAGES, QUESTION, thread

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.storage.threads import is_postgres_url, open_threads


def main() -> int:
    db, thread_id, mode = sys.argv[1:4]
    saver = (
        open_threads(db).saver
        if is_postgres_url(db)
        else SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    )
    graph = build_graph(
        saver,
        model=ScriptedChatModel(outputs=GOOD_RUN),
        wiki=MemorySource(PAGES),
        interrupt_before=["act"] if mode == "start" else None,
    )
    config = thread(thread_id)
    out = graph.invoke(None if mode == "resume" else {"question": QUESTION}, config)
    print(json.dumps(out))
    return 3 if graph.get_state(config).next else 0


if __name__ == "__main__":
    sys.exit(main())
