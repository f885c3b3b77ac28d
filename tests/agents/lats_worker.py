"""Run or resume one LATS search on a SQLite checkpoint file (the CLI's saver), in its own process.

Usage: python lats_worker.py DB DELAY_S CALL_LOG ACTION_LOG
Each model call appends its index to CALL_LOG, and each page fetch (a Search) its title to
ACTION_LOG, as it starts (one line, flushed). Prints "ready" on stderr once imported, then
the final state's values as JSON on stdout. Used by test_lats_resume.py and
bench/lats_kill_resume.py to SIGKILL a search at some moment and resume it.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from langchain_core.callbacks import CallbackManagerForLLMRun  # noqa: E402
from langchain_core.messages import BaseMessage  # noqa: E402
from langchain_core.outputs import ChatResult  # noqa: E402
from support import PAGES, QUESTION  # noqa: E402

from wikireact import MemorySource, ScriptedChatModel  # noqa: E402
from wikireact.agents.lats.graph import build_graph  # noqa: E402
from wikireact.models.call_metadata import CALL_INDEX_KEY  # noqa: E402
from wikireact.models.scripted import ScriptOutput  # noqa: E402
from wikireact.storage.threads import open_threads  # noqa: E402
from wikireact.wiki.base import Disambiguation, Page  # noqa: E402

SEARCH: list[ScriptOutput] = [
    "Thought 1: Guess.\nAction 1: Finish[no]\n\nThought 1: Him first.\nAction 1: Search[Scott "
    "Derrickson]\n\nThought 1: Wood first.\nAction 1: Search[Ed Wood]",
    "Guessing was wrong: read both pages.",
    "Value: 6",
    "Value: 7",
    "Thought 2: Born?\nAction 2: Lookup[born]\n\nThought 2: The other.\nAction 2: Search[Scott "
    "Derrickson]\n\nThought 2: Guess.\nAction 2: Finish[no]",
    "Value: 4",
    "Value: 8",
    "Guessing again was wrong.",
    "Thought 3: Nationality?\nAction 3: Lookup[American]\n\nThought 3: Both American.\nAction 3: "
    "Finish[yes]",
    "Value: 6",
]
"""Three iterations: the root's three children (one a wrong Finish), Ed Wood's three (one a
wrong Finish), then Scott Derrickson's page from Ed Wood's, where Finish[yes] is correct."""
SEARCHES = 3
"""Searches the search runs (page fetches; a Lookup reads the page kept in state)."""
INPUTS = {"question": QUESTION, "gold_answer": "yes", "candidates": 3}
COMPARED = ("answer", "status", "steps", "model_calls", "trajectory", "usage", "tree", "stats")


def _append(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as log:
        log.write(line + "\n")


class LoggedModel(ScriptedChatModel):
    """The scripted model, writing each call's index to a file as the call starts."""

    call_log: str = "/dev/null"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        _append(
            self.call_log, str((getattr(run_manager, "metadata", None) or {}).get(CALL_INDEX_KEY))
        )
        return super()._generate(messages, stop, run_manager, **kwargs)


class LoggedSource(MemorySource):
    """The in-memory Wikipedia, logging each page fetch and waiting `delay_s` before answering."""

    def __init__(self, action_log: str, delay_s: float) -> None:
        """Serve `PAGES`, logging to `action_log`."""
        super().__init__(PAGES)
        self.action_log, self.delay_s = action_log, delay_s

    def fetch(self, title: str) -> Page | Disambiguation | None:
        """Log the fetch, wait, then answer as `MemorySource` does."""
        _append(self.action_log, title)
        time.sleep(self.delay_s)
        return super().fetch(title)


def run(db: str, delay_s: float, call_log: str, action_log: str) -> dict[str, Any]:
    """Start the search, or continue it where it stopped, to its end; return its final values."""
    with closing(open_threads(db)) as store:
        model = LoggedModel(outputs=SEARCH, delay_s=delay_s, call_log=call_log)
        graph = build_graph(store.saver, model=model, wiki=LoggedSource(action_log, delay_s))
        config: Any = {"configurable": {"thread_id": "t"}}
        graph.invoke(INPUTS, config, durability="sync")
        return dict(graph.get_state(config).values)


def comparable(values: dict[str, Any]) -> dict[str, Any]:
    """Return what a resumed search must share with an uninterrupted one (not audit times)."""
    audit = [
        {k: v for k, v in a.items() if not k.endswith(("_at", "_seconds"))} for a in values["audit"]
    ]
    return {**{key: values[key] for key in COMPARED}, "audit": audit}


if __name__ == "__main__":
    print("ready", file=sys.stderr, flush=True)
    print(json.dumps(run(sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4])))
