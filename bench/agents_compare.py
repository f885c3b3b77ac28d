"""The five agents on 64 scripted two-hop questions: model calls, tokens, requests and time.

Every question needs two pages (two hops). The scripted model waits 200 ms per call and
the source 100 ms per page, as a slow model and a live Wikipedia would. All four run
through the same evaluation harness (`eval --method react|rewoo|plan-execute|reflexion|lats`)
at concurrency 16, each with one scripted run per question:

- ReAct calls the model once per step: Search, Search, Finish = N + 1 = 3 calls.
- ReWOO plans both Searches in one call, runs them at the same time (one round of source
  latency) and answers in a second call: 2 calls.
- Plan-and-Execute plans 2 sub-goals, runs each as a ReAct episode (Search, Finish) and
  replans after each: the remaining sub-goal, then Finish: 1 + 2 x 2 + 2 = 7 calls.
- Reflexion: a wrong first trial (Finish[no] at once; `eval` judges it against the gold
  answer), its reflection, then a right second trial (Search, Search, Finish):
  1 + 1 + 3 = 5 calls.
- LATS (`eval --method lats`, its defaults: up to 5 candidates, 10 iterations): the
  root's expansion proposes a wrong Finish and a Search; the Finish is judged wrong
  against the gold answer and reflected on, the Search valued; then one expansion per
  hop (Search, then Finish[yes], judged correct): 3 expansions + 1 reflection + 2 values
  = 6 calls, with longer prompts (the value prompts).

Wall times are noisy on a shared machine: the call and token counts are exact.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from table import Row, print_rows

from wikireact import MemorySource, ScriptedChatModel
from wikireact.eval.harness import EvalConfig
from wikireact.eval.run import run_eval
from wikireact.models.scripted import ScriptOutput
from wikireact.wiki.base import Disambiguation, Page

QUESTIONS = 64
MODEL_DELAY_S = 0.2
SOURCE_DELAY_S = 0.1
CONCURRENCY = 16
PAGES = {
    "Scott Derrickson": "Scott Derrickson (born July 16, 1966) is an American director.",
    "Ed Wood": "Edward Davis Wood Jr. (1924 - 1978) was an American filmmaker.",
}
REACT_RUN: list[ScriptOutput] = [
    "Thought: first person.\nAction: Search[Scott Derrickson]",
    "Thought: second person.\nAction: Search[Ed Wood]",
    "Thought: both American.\nAction: Finish[yes]",
]
SCRIPTS: dict[str, list[ScriptOutput]] = {
    "react": REACT_RUN,
    "rewoo": [
        "Plan: first person.\n#E1 = Search[Scott Derrickson]\n"
        "Plan: second person.\n#E2 = Search[Ed Wood]",
        "Thought: both American.\nFinish[yes]",
    ],
    "plan-execute": [
        "Plan:\n1. Find Scott Derrickson's nationality.\n2. Find Ed Wood's nationality.",
        "Thought: his page.\nAction: Search[Scott Derrickson]",
        "Thought: he is American.\nAction: Finish[American]",
        "2. Find Ed Wood's nationality.",
        "Thought: his page.\nAction: Search[Ed Wood]",
        "Thought: he is American.\nAction: Finish[American]",
        "Both are American.\nFinish[yes]",
    ],
    "reflexion": [
        "Thought: I guess they differ.\nAction: Finish[no]",  # trial 1: wrong
        "I answered without searching. Search both people, then compare.",  # the reflection
        *REACT_RUN,  # trial 2
    ],
    "lats": [
        "Thought: I guess they differ.\nAction: Finish[no]\n\n"  # judged wrong: reflected on
        "Thought: first person.\nAction: Search[Scott Derrickson]",  # valued
        "I answered without searching. Search both people, then compare.",  # the reflection
        "Value: 7",
        "Thought: second person.\nAction: Search[Ed Wood]",
        "Value: 8",
        "Thought: both American.\nAction: Finish[yes]",  # judged correct: the search stops
    ],
}
EXPECTED_CALLS = {
    "react": (3, "== 3 (N + 1)"),
    "rewoo": (2, "== 2"),
    "plan-execute": (7, "== 7 (1 + 2x2 + 2)"),
    "reflexion": (5, "== 5 (1 + 1 + 3)"),
    "lats": (6, "== 6 (3 expansions + 1 reflection + 2 values)"),
}


class SlowSource(MemorySource):
    """PAGES, each fetch taking `SOURCE_DELAY_S` (as a live source's round trip)."""

    def fetch(self, title: str) -> Page | Disambiguation | None:
        """Wait, then return the page."""
        time.sleep(SOURCE_DELAY_S)
        return super().fetch(title)


def measure(method: str, tmp: Path) -> dict[str, float]:
    """Evaluate the 64 questions with `method`; return its per-question figures."""
    dataset = tmp / "questions.jsonl"
    dataset.write_text(
        "".join(
            json.dumps({"_id": f"q{i}", "question": f"Two-hop question {i}?", "answer": "yes"})
            + "\n"
            for i in range(QUESTIONS)
        )
    )
    config = EvalConfig(
        dataset=str(dataset),
        method=method,  # type: ignore[arg-type]
        model="scripted",
        wiki="memory",
        sample_seed=None,
        concurrency=CONCURRENCY,
    )
    start = time.perf_counter()
    report = run_eval(
        config,
        tmp / f"out-{method}",
        model=ScriptedChatModel(outputs=SCRIPTS[method], delay_s=MODEL_DELAY_S),
        wiki=SlowSource(PAGES),
    )
    wall = time.perf_counter() - start
    mean = report["metrics"]["mean"]
    assert mean["em"] == 1.0, (method, mean)
    return {
        "model calls": mean["model_calls"],
        "latency s": mean["latency_mean_s"],
        "input tokens": mean["input_tokens"],
        "output tokens": mean["output_tokens"],
        "wiki requests": mean["wiki_requests_per_question"],
        "wall s": wall,
    }


def rows() -> list[Row]:
    """Return the agents' figures as table rows."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for method in SCRIPTS:
            figures = measure(method, Path(tmp))
            expected, target = EXPECTED_CALLS[method]
            rows += [
                Row(
                    f"{method}: model calls per question",
                    figures["model calls"],
                    "",
                    target,
                    figures["model calls"] == expected,
                ),
                Row(f"{method}: latency per question (mean)", figures["latency s"], "s"),
                Row(f"{method}: input tokens per question", figures["input tokens"], ""),
                Row(f"{method}: output tokens per question", figures["output tokens"], ""),
                Row(f"{method}: wiki requests per question", figures["wiki requests"], ""),
                Row(f"{method}: wall, 64 q, concurrency 16", figures["wall s"], "s"),
            ]
    return rows


def main() -> int:
    """Print the figures."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
