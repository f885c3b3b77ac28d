"""Prompt tokens per step of a long episode with the embedded model: the window holds.

Runs what `wikireact ask --offline --max-steps N` runs (Gemma 3 270M through llama.cpp, on
the embedded snapshot) on a question whose episode reads many pages, and prints per step
the prompt tokens llama.cpp received (reported `input_tokens`, counted by llama.cpp's own
tokenizer), the observations cleared to fit the window, and the wall time of the model and
Wikipedia calls. Before issue 36 step 34 raised llama.cpp's "Requested tokens (8326) exceed
context window of 8192"; now the prompt stays under the window minus the reply's 160 tokens
once it fills. Slow on a shared CPU (seconds a step): run it by hand.

    python bench/context_window.py [MAX_STEPS] [CONTEXT_TOKENS] [QUESTION]

CONTEXT_TOKENS (default 0: the model's own 8,192) makes the window fill within a few steps.
"""

from __future__ import annotations

import sys

from langgraph.checkpoint.memory import InMemorySaver

from wikireact import Context, build_graph
from wikireact.models.local.llama import CONTEXT_TOKENS, LOCAL_MAX_TOKENS
from wikireact.wiki.offline_corpus import ensure_offline_snapshot

QUESTION = (
    "Which river flows through the capital of the country where the painter of the "
    "Mona Lisa died, and how long is it?"
)


def main() -> None:
    """Run the episode and print one line per step, then the largest prompt."""
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    window = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    question = sys.argv[3] if len(sys.argv) > 3 else QUESTION
    graph = build_graph(InMemorySaver(), model="local", wiki=str(ensure_offline_snapshot()))
    config = {"configurable": {"thread_id": "bench"}}
    limit = (window or CONTEXT_TOKENS) - LOCAL_MAX_TOKENS
    print(f"window {window or CONTEXT_TOKENS} tokens, prompt limit {limit}, max steps {steps}")
    print(f"{'step':>5} {'prompt tok':>10} {'cleared':>7} {'model s':>8} {'wiki s':>7}  action")
    shown = 0
    for chunk in graph.stream(
        {"question": question},
        config,  # type: ignore[arg-type]
        context=Context(max_steps=steps, repetition_limit=1000, context_tokens=window),
        stream_mode="values",
    ):
        usage = chunk.get("usage") or []
        if usage and len(usage) == len(chunk.get("trajectory") or []):
            u, step, audit = usage[-1], chunk["trajectory"][-1], chunk["audit"][-1]
            if u["step"] == chunk["steps"] > shown:
                shown = u["step"]
                print(
                    f"{u['step']:>5} {u['input_tokens']:>10} {u.get('cleared', 0):>7} "
                    f"{audit['model_seconds']:>8.2f} {audit['wiki_seconds']:>7.2f}  "
                    f"{step['action'][:60]}",
                    flush=True,
                )
    values = graph.get_state(config).values  # type: ignore[arg-type]
    largest = max((u["input_tokens"] for u in values.get("usage") or []), default=0)
    print(
        f"status {values['status']} after {values['steps']} steps; largest prompt {largest} tokens"
    )


if __name__ == "__main__":
    main()
