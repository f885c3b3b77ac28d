"""Kill Plan-and-Execute episodes with SIGKILL at random moments, resume each, and compare.

Each episode (a plan, two sub-goals of 2 and 4 ReAct steps, a replanned list, a Finish)
runs in a subprocess on its own SQLite checkpoint file with durability="sync" and a
scripted model waiting `DELAY_S` per call. It is killed at a random moment (in planning,
inside a sub-goal's subgraph, between sub-goals), up to twice, then resumed to its end in
a fresh process. Its final values must equal an uninterrupted run's (audit times aside),
and a resume must not repeat saved work: the model calls made in all processes may exceed
the run's own by at most one per kill (the call in flight). Exits 1 otherwise, or if fewer
than `MIN_INSIDE_KILLS` kills landed inside a sub-goal.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langgraph.checkpoint.sqlite import SqliteSaver

from wikireact import Context, MemorySource, ScriptedChatModel
from wikireact.agents.plan_execute.graph import build_graph
from wikireact.models.call_metadata import CALL_INDEX_KEY

EPISODES = 16
MIN_INSIDE_KILLS = 8
DELAY_S = 0.2
QUESTION = "Which topic do Page 0 and Page 1 share?"
PAGES = {
    f"Page {i}": " ".join(f"Page {i} sentence {j} is about topic{j % 5}." for j in range(40))
    for i in range(2)
}
SCRIPT = [
    "1. Find the topic of Page 0.\n2. Find the topic of Page 1.",
    "Thought: open it.\nAction: Search[Page 0]",
    "Thought: found.\nAction: Finish[topic0]",
    "1. Find where Page 1 mentions topic3.",
    "Thought: open it.\nAction: Search[Page 1]",
    "Thought: look.\nAction: Lookup[topic3]",
    "Thought: again.\nAction: Lookup[topic3]",
    "Thought: found.\nAction: Finish[topic3]",
    "Finish[topic3]",
]
VALUES = ("answer", "status", "steps", "model_calls", "trajectory", "usage", "subgoals", "plans")


class LoggedModel(ScriptedChatModel):
    """The scripted model, appending each call's index to a file as the call starts."""

    call_log: str = "/dev/null"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with open(self.call_log, "a", encoding="utf-8") as log:
            log.write(f"{(getattr(run_manager, 'metadata', None) or {}).get(CALL_INDEX_KEY)}\n")
        return super()._generate(messages, stop, run_manager, **kwargs)


def episode(db: str, call_log: str) -> dict[str, Any]:
    """Run or continue the episode to its end; return its final values."""
    conn = sqlite3.connect(db, check_same_thread=False)
    model = LoggedModel(outputs=SCRIPT, delay_s=DELAY_S, call_log=call_log)
    graph = build_graph(SqliteSaver(conn), model=model, wiki=MemorySource(PAGES))
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"question": QUESTION}, config, context=Context(max_steps=10), durability="sync")
    values = dict(graph.get_state(config).values)
    conn.close()
    return values


def inside_subgoal(db: str) -> bool:
    """Whether the thread's latest checkpoint is inside a sub-goal with a step saved."""
    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        state = build_graph(SqliteSaver(conn)).get_state(
            {"configurable": {"thread_id": "t"}}, subgraphs=True
        )
    finally:
        conn.close()
    inner = next((t.state for t in state.tasks if t.name == "execute" and t.state), None)
    return inner is not None and bool(getattr(inner, "values", {}).get("steps"))


def comparable(values: dict[str, Any]) -> dict[str, Any]:
    """Return the values a resumed run must share with an uninterrupted one (not audit times)."""
    audit = [{k: v for k, v in a.items() if not k.endswith("_at")} for a in values["audit"]]
    return {**{key: values[key] for key in VALUES}, "audit": audit}


def run_one(index: int, tmp: Path, reference: dict[str, Any], rng: random.Random) -> dict:
    """Kill one episode up to twice at random moments, resume it, compare."""
    db, log = str(tmp / f"e{index}.db"), tmp / f"e{index}.log"
    command = [sys.executable, __file__, "--worker", db, str(log)]
    kills = inside = 0
    for _attempt in range(2):
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        proc.stderr.readline()  # "ready": imports done
        time.sleep(rng.uniform(0.1, 2.2))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        inside += Path(db).exists() and inside_subgoal(db)
    final = subprocess.run(command, capture_output=True, text=True, timeout=180)
    same = final.returncode == 0 and comparable(json.loads(final.stdout)) == reference
    calls = len(log.read_text().split()) if log.exists() else 0
    return {"kills": kills, "inside": inside, "same": same, "extra_calls": calls - len(SCRIPT)}


def main() -> int:
    """Run the experiment and print its figures."""
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print("ready", file=sys.stderr, flush=True)
        print(json.dumps(episode(sys.argv[2], sys.argv[3])))
        return 0
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        reference = comparable(episode(str(tmp / "reference.db"), "/dev/null"))
        rng = random.Random(29)
        seeds = [random.Random(rng.random()) for _ in range(EPISODES)]
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(
                pool.map(lambda i: run_one(i, tmp, reference, seeds[i]), range(EPISODES))
            )
    kills = sum(r["kills"] for r in results)
    inside = sum(r["inside"] for r in results)
    same = sum(r["same"] for r in results)
    extra = sum(r["extra_calls"] for r in results)
    repeated_too_much = [r for r in results if r["extra_calls"] > r["kills"]]
    print(
        f"Plan-and-Execute on SQLite: episodes {EPISODES}, model calls per run {len(SCRIPT)}, "
        f"SIGKILLs {kills} ({inside} inside a sub-goal), identical after resume {same}/{EPISODES}, "
        f"model calls repeated {extra} (at most one per kill: "
        f"{'yes' if not repeated_too_much else 'NO'}), wall {time.perf_counter() - start:.0f} s"
    )
    ok = same == EPISODES and not repeated_too_much and inside >= MIN_INSIDE_KILLS
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
