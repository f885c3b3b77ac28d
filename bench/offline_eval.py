"""`make bench-offline`: the embedded model (Gemma 3 270M) on the offline single-hop question set.

Runs `wikireact eval`'s harness (ReAct, offline snapshot, concurrency 1) once per
configuration of the local model and prints EM, F1, repetition-halted and invalid rates
and seconds per step and per question (wall clock, and CPU seconds of this process, which
are less disturbed by other load on a shared machine):

- `before`: the default (Groq) prompt, free decoding: the local model as it was;
- `prompt`: the small-model prompt variant, free decoding;
- `grammar`: + the step grammar (one thought line, one action, numbered; a Finish may not
  start like a searched title);
- `extractive`: + a Finish copies a run of words of the question's type out of the
  observations, preferring those the thought names (`wikireact.models.local.answer_spans`);
- `searches`: + a Search may not start like a title searched already, except the latest
  miss's suggestions;
- `after`: + a thought after page text begins "The Observation says " (the shipped default).

Targets (issue 19) apply to `after`: EM >= 50%, repetition-halted <= 10%, invalid <= 10%,
seconds per step <= 1.5x `before`'s. Too slow for `make bench` (minutes per configuration).

    python offline_eval.py [--limit N] [--configs before,prompt,after] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from table import Row, print_rows

from wikireact.eval.harness import EvalConfig
from wikireact.eval.run import run_eval
from wikireact.models.local.llama import LlamaCppChatModel, model_file
from wikireact.wiki.factory import open_source

QUESTIONS = Path(__file__).resolve().parents[1] / "tests" / "data" / "offline_single_hop.json"
CONFIGS = {
    "before": {"prompt_variant": "default", "grammar": False},
    "prompt": {"prompt_variant": "small", "grammar": False},
    "grammar": {
        "prompt_variant": "small",
        "grammar": True,
        "extractive_answers": False,
        "no_repeated_searches": False,
        "observation_opening": False,
    },
    "extractive": {
        "prompt_variant": "small",
        "grammar": True,
        "no_repeated_searches": False,
        "observation_opening": False,
    },
    "searches": {"prompt_variant": "small", "grammar": True, "observation_opening": False},
    "after": {"prompt_variant": "small", "grammar": True},
}


def measure(name: str, limit: int | None, out: Path) -> dict[str, float]:
    """Evaluate one configuration; return its figures."""
    model = LlamaCppChatModel(model_path=str(model_file()), **CONFIGS[name])
    config = EvalConfig(
        dataset=str(QUESTIONS),
        method="react",
        model="local",
        wiki="offline",
        limit=limit,
        concurrency=1,
    )
    cpu = time.process_time()
    report = run_eval(config, out / name, model=model, wiki=open_source("offline"))
    cpu = time.process_time() - cpu
    mean = report["metrics"]["mean"]
    questions = (
        report["metrics"]["per_seed"]["0"]["questions"] if report["metrics"].get("per_seed") else 0
    )
    steps = mean["mean_steps"] * questions
    return {
        "em": mean["em"],
        "f1": mean["f1"],
        "repeat": mean["repetition_halted_rate"],
        "invalid": mean["invalid_action_rate"],
        "s_per_question": mean["latency_mean_s"],
        "s_per_step": mean["latency_mean_s"] / mean["mean_steps"] if mean["mean_steps"] else 0.0,
        "cpu_s_per_step": cpu / steps if steps else 0.0,
        "steps": mean["mean_steps"],
    }


def rows(figures: dict[str, dict[str, float]]) -> list[Row]:
    """Turn each configuration's figures into table rows, with targets on `after`."""
    out: list[Row] = []
    before = figures.get("before")
    for name, f in figures.items():
        target = name == "after"
        out += [
            Row(
                f"{name}: EM",
                100 * f["em"],
                "%",
                ">= 50" if target else "",
                f["em"] >= 0.5 if target else None,
            ),
            Row(f"{name}: F1", 100 * f["f1"], "%"),
            Row(
                f"{name}: repetition-halted",
                100 * f["repeat"],
                "%",
                "<= 10" if target else "",
                f["repeat"] <= 0.1 if target else None,
            ),
            Row(
                f"{name}: invalid steps",
                100 * f["invalid"],
                "%",
                "<= 10" if target else "",
                f["invalid"] <= 0.1 if target else None,
            ),
            Row(f"{name}: steps per question", f["steps"], ""),
            Row(f"{name}: s per question", f["s_per_question"], "s"),
        ]
        slow = target and before is not None
        out.append(
            Row(
                f"{name}: s per step",
                f["s_per_step"],
                "s",
                "<= 1.5x before" if slow else "",
                f["s_per_step"] <= 1.5 * before["s_per_step"] if slow and before else None,
            )
        )
        out.append(Row(f"{name}: CPU s per step", f["cpu_s_per_step"], "s"))
    return out


def main() -> int:
    """Run the chosen configurations in turn and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="questions (default: all)")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here")
    args = parser.parse_args()
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        for name in args.configs.split(","):
            figures[name] = measure(name, args.limit, out)
            print(f"ran {name}: {figures[name]}", file=sys.stderr, flush=True)
    return print_rows(rows(figures))


if __name__ == "__main__":
    sys.exit(main())
