"""Reflexion as an evaluation method: the gold answer decides each trial (exact match)."""

from __future__ import annotations

import json
from pathlib import Path

from support import SpyModel, snapshot_eval

from wikireact.models.scripted import ScriptOutput

WRONG = "Thought 1: I guess.\nAction 1: Finish[no]"
LESSON = "Search before answering."
RIGHT: list[ScriptOutput] = [
    "Thought 1: Look him up.\nAction 1: Search[Ed Wood]",
    "Thought 2: Poughkeepsie.\nAction 2: Finish[Poughkeepsie, New York]",
]


def test_eval_method_reflexion_retries_a_trial_the_gold_answer_rejects(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    # q2's first trial finishes with a wrong answer: only the gold answer can reject it.
    model = SpyModel(
        by_question={
            "q1": ["Thought 1: Both American.\nAction 1: Finish[yes]"],
            "q2": [WRONG, LESSON, *RIGHT],
            "q3": ["Thought 1: He lives there.\nAction 1: Finish[Los Angeles]"],
            "q4": ["Thought 1: He was not.\nAction 1: Finish[no]"],
        }
    )
    out = tmp_path / "reflexion"
    snapshot_eval(dataset, snapshot, out, model, "reflexion")
    records = {
        r["id"]: r for r in map(json.loads, (out / "trajectories.jsonl").read_text().splitlines())
    }
    record = records["q2"]
    assert record["method"] == "reflexion"
    assert record["answer"] == "Poughkeepsie, New York" and record["em"] == 1.0
    assert [t["verdict"] for t in record["trials"]] == ["wrong", "correct"]
    assert record["trials"][0]["reflection"] == LESSON
    assert record["trials"][1]["lessons"] == [LESSON]
    assert record["model_calls"] == 4  # a wrong trial, its reflection, a right trial of two steps
    assert "Poughkeepsie" not in record["trials"][0]["reflection"]  # the gold answer stays out
    assert all(len(records[q]["trials"]) == 1 for q in ("q1", "q3", "q4"))  # right at once
