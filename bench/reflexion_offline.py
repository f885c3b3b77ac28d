"""Reflexion with the embedded model (Gemma 3 270M) on the offline single-hop question set.

Runs the Reflexion graph (`wikireact.agents.reflexion`) on each question of
`tests/data/offline_single_hop.json` with its gold answer (exact match decides a trial, as
in the paper's HotpotQA runs), memory off (each question starts without lessons), and
prints EM after 1, 2 and 3 trials (after 1 trial it is ReAct's EM), model calls per
question (steps and reflections), and seconds per question: wall clock and CPU seconds of
this process (less disturbed by other load on a shared machine). Minutes, not seconds:
not part of `make bench`.

    python reflexion_offline.py [--limit N] [--max-trials 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from wikireact.agents.reflexion.graph import build_graph
from wikireact.models.local.llama import LlamaCppChatModel, model_file
from wikireact.protocols.scoring import exact_match
from wikireact.wiki.factory import open_source

QUESTIONS = Path(__file__).resolve().parents[1] / "tests" / "data" / "offline_single_hop.json"


def main() -> None:
    """Run the questions and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--max-trials", type=int, default=3)
    args = parser.parse_args()
    items = json.loads(QUESTIONS.read_text(encoding="utf-8"))[: args.limit]
    graph = build_graph(
        model=LlamaCppChatModel(model_path=str(model_file())), wiki=open_source("offline")
    )
    context = {"model": "local", "wiki": "offline"}
    solved_by = [0] * (args.max_trials + 1)  # questions first solved at trial k
    calls = reflections = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for item in items:
        inputs = {
            "question": item["question"],
            "gold_answer": item["answer"],
            "max_trials": args.max_trials,
            "memory": "off",
        }
        out = graph.invoke(inputs, context=context)
        calls += out["model_calls"]
        reflections += sum(1 for u in out["usage"] if u["call"] == "reflection")
        passed = [t["number"] for t in out["trials"] if t["verdict"] == "correct"]
        if passed:
            solved_by[passed[0]] += 1
        assert bool(passed) == bool(exact_match(out["answer"], item["answer"]))
        verdicts = " ".join(str(t["verdict"]) for t in out["trials"])
        print(f"{item['_id']}: {verdicts}", file=sys.stderr, flush=True)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    n = len(items)
    print(f"{n} questions, max_trials {args.max_trials}, memory off, Gemma 3 270M (local)")
    for k in range(1, args.max_trials + 1):
        print(f"EM after {k} trial(s): {100 * sum(solved_by[: k + 1]) / n:.1f}%")
    print(f"model calls/question: {calls / n:.2f} (reflections: {reflections / n:.2f})")
    print(f"seconds/question: {wall / n:.2f} wall, {cpu / n:.2f} CPU")


if __name__ == "__main__":
    main()
