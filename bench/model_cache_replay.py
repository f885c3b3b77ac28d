"""Model cache replay: 64 ReAct questions recorded with a model waiting 200 ms per call, then replayed.

Prints the recording and replay wall times (the replay's include the graph and its
checkpoints), the replay's model calls (target: 0) and the time of one cache lookup
(target: < 5 ms).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from eval_throughput import SCRIPT, WIKI, write_questions
from table import Row, print_rows

from wikireact import MemorySource, ScriptedChatModel
from wikireact._json_text import json_lines
from wikireact.eval.harness import EvalConfig
from wikireact.eval.run import run_eval

QUESTIONS = 64
DELAY_S = 0.2


class CountingModel(ScriptedChatModel):
    """A scripted model that counts the calls that reach it."""

    calls: int = 0

    def _respond(self, index, messages, stop, outputs=None):  # type: ignore[no-untyped-def]
        """Count, then answer from the script."""
        self.calls += 1
        return super()._respond(index, messages, stop, outputs)


def run() -> dict[str, float]:
    """Record, replay, and return the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        dataset = write_questions(Path(tmp) / "questions.jsonl", QUESTIONS)
        config = EvalConfig(
            dataset=str(dataset),
            method="react",
            model="scripted",
            wiki="memory",
            sample_seed=None,
            concurrency=16,
            model_cache=str(Path(tmp) / "cache.db"),
        )
        figures: dict[str, float] = {}
        for phase in ("record", "replay"):
            model = CountingModel(outputs=SCRIPT, delay_s=DELAY_S)
            start = time.perf_counter()
            report = run_eval(config, Path(tmp) / phase, model=model, wiki=MemorySource(WIKI))
            figures[f"{phase} wall s"] = time.perf_counter() - start
            figures[f"{phase} model calls"] = model.calls
            figures[f"{phase} cache hits"] = report["model_cache"]["hits"]
        replay_records = list(json_lines((Path(tmp) / "replay" / "trajectories.jsonl").read_text()))
        figures["replay ms per cached call"] = (
            1000 * figures["replay wall s"] / max(figures["replay cache hits"], 1)
        )
        figures["records"] = len(replay_records)
        figures["lookup ms"] = _lookup_ms(Path(tmp) / "cache.db")
    return figures


def _lookup_ms(path: Path) -> float:
    """Milliseconds per lookup of a stored call (a ReAct-sized prompt) in the cache file."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.outputs import ChatGeneration

    from wikireact.models.cache import SqliteModelCache, call_key
    from wikireact.prompting.react import build_messages

    store = SqliteModelCache(path)
    keys = [
        call_key("bench", [*build_messages(f"Question {i}?", []), HumanMessage("x")], None, {}, i)
        for i in range(200)
    ]
    for prompt, llm_string in keys:
        store.update(prompt, llm_string, [ChatGeneration(message=AIMessage("Action: Finish[x]"))])
    start = time.perf_counter()
    for prompt, llm_string in keys * 5:
        assert store.lookup(prompt, llm_string)
    store.close()
    return 1000 * (time.perf_counter() - start) / (len(keys) * 5)


def rows() -> list[Row]:
    """Return the figures as table rows."""
    f = run()
    return [
        Row(f"cache record, {QUESTIONS} q, 200 ms/call", f["record wall s"], "s"),
        Row(f"cache replay, {QUESTIONS} q", f["replay wall s"], "s"),
        Row(
            "cache replay model calls",
            f["replay model calls"],
            "calls",
            "== 0",
            f["replay model calls"] == 0,
        ),
        Row("cache replay wall per model call", f["replay ms per cached call"], "ms"),
        Row(
            "cache lookup (ReAct-sized prompt)", f["lookup ms"], "ms", "< 5 ms", f["lookup ms"] < 5
        ),
    ]


if __name__ == "__main__":
    sys.exit(print_rows(rows()))
