"""The paper's error categories: each one produced by a scripted episode through the harness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import PAGES

from wikireact import MemorySource, ScriptedChatModel
from wikireact.eval.categories import CATEGORIES, categorize, count_categories
from wikireact.eval.harness import EvalConfig
from wikireact.eval.methods import Method
from wikireact.eval.run import run_eval
from wikireact.models.scripted import ScriptOutput

BORN = "Where did Ed Wood die?"
FINISH_LA = "Thought: found it.\nAction: Finish[Los Angeles]"
SEARCH_WOOD = "Thought: look him up.\nAction: Search[Ed Wood]"


def run_one(
    tmp_path: Path,
    script: list[ScriptOutput],
    gold: str,
    *,
    method: Method = "react",
    max_steps: int = 7,
    item: dict[str, Any] | None = None,
    seeds: int = 1,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Evaluate one question with a scripted model; return its record and the report."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(
        json.dumps({"_id": "q", "question": BORN, "answer": gold, **(item or {})}) + "\n"
    )
    config = EvalConfig(
        dataset=str(dataset),
        method=method,
        model="scripted",
        wiki="memory",
        sample_seed=None,
        concurrency=1,
        max_steps=max_steps,
        sc_samples=3,
        seeds=seeds,
    )
    report = run_eval(
        config, tmp_path / "out", model=ScriptedChatModel(outputs=script), wiki=MemorySource(PAGES)
    )
    record = json.loads((tmp_path / "out" / "trajectories.jsonl").read_text().splitlines()[0])
    return record, report


# Ed Wood's page (first five sentences shown by Search) says "He died in Los Angeles."
CASES: dict[str, dict[str, Any]] = {
    "correct": dict(script=[SEARCH_WOOD, FINISH_LA], gold="Los Angeles"),
    "search_miss": dict(
        script=[
            "Thought: x.\nAction: Search[Ed Woood]",
            FINISH_LA.replace("Los Angeles", "Denver"),
        ],
        gold="Los Angeles",
    ),
    "repetition": dict(script=[SEARCH_WOOD] * 3, gold="Los Angeles"),
    "budget_exhausted": dict(
        script=[SEARCH_WOOD, "Action: Lookup[born]", "Action: Lookup[died]"],
        gold="Los Angeles",
        max_steps=3,
    ),
    "invalid_format": dict(
        script=[
            SEARCH_WOOD,
            "Thought: hmm.\nAction: Serch[x]",
            "I am not sure.",
            "Action: Finish[Denver]",
        ],
        gold="Los Angeles",
    ),
    "unsupported_finish": dict(script=[SEARCH_WOOD, "Action: Finish[Chicago]"], gold="Los Angeles"),
    "evidence_wrong": dict(
        script=[SEARCH_WOOD, "Action: Finish[Poughkeepsie]"], gold="Los Angeles"
    ),
    "no_evidence_wrong": dict(script=[SEARCH_WOOD, "Action: Finish[yes]"], gold="no"),
}


@pytest.mark.parametrize("category", list(CASES))
def test_each_category_from_a_scripted_episode(tmp_path: Path, category: str) -> None:
    case = dict(CASES[category])
    record, report = run_one(tmp_path, case.pop("script"), case.pop("gold"), **case)
    assert record["category"] == category, record["trajectory"]
    counts = report["metrics"]["categories"]
    assert list(counts) == list(CATEGORIES) and counts[category] == 1 and sum(counts.values()) == 1


def test_cases_cover_every_category() -> None:
    assert set(CASES) == set(CATEGORIES)


def test_search_miss_uses_the_supporting_pages_when_the_dataset_names_them(tmp_path: Path) -> None:
    # Ed Wood's page shows the gold answer, but the question needs Scott Derrickson's page.
    script: list[ScriptOutput] = [SEARCH_WOOD, "Action: Finish[Poughkeepsie]"]
    without, _ = run_one(tmp_path / "a", script, "Los Angeles")
    assert without["category"] == "evidence_wrong"
    facts = {"supporting_facts": [["Scott Derrickson", 1], ["Ed Wood", 3]]}
    needed, _ = run_one(tmp_path / "b", script, "Los Angeles", item=facts)
    assert needed["category"] == "search_miss"
    both: list[ScriptOutput] = [
        SEARCH_WOOD,
        "Action: Search[scott derrickson]",
        "Action: Finish[Poughkeepsie]",
    ]
    opened, _ = run_one(tmp_path / "c", both, "Los Angeles", item=facts)
    assert opened["category"] == "evidence_wrong"


def test_methods_without_wikipedia(tmp_path: Path) -> None:
    unparsed, _ = run_one(tmp_path / "a", ["I cannot say."], "Los Angeles", method="standard")
    assert unparsed["answer"] is None and unparsed["category"] == "invalid_format"
    wrong, _ = run_one(
        tmp_path / "b",
        ["Thought: he lived in Denver. So the answer is Denver."],
        "Los Angeles",
        method="cot",
    )
    assert wrong["category"] == "no_evidence_wrong"
    right, _ = run_one(tmp_path / "c", ["Answer: Los Angeles"], "Los Angeles", method="standard")
    assert right["category"] == "correct"


def test_fallback_answer_is_not_an_unsupported_finish(tmp_path: Path) -> None:
    # ReAct runs out of budget, CoT-SC answers: the category is the episode's ending.
    # The episode and the CoT-SC samples both read the script from its start.
    script: list[ScriptOutput] = [
        SEARCH_WOOD,
        "Action: Lookup[born]",
        "Thought: So the answer is Chicago.",
    ]
    record, _ = run_one(tmp_path, script, "Los Angeles", method="react-cot-sc", max_steps=2)
    assert record["switched"] and record["category"] == "budget_exhausted"


def test_counts_sum_to_questions_per_seed(tmp_path: Path) -> None:
    _, report = run_one(tmp_path, [SEARCH_WOOD, FINISH_LA], "Los Angeles", seeds=3)
    assert sum(report["metrics"]["categories"].values()) == 3
    assert all(sum(c.values()) == 1 for c in report["metrics"]["categories_per_seed"].values())


def test_old_records_without_step_kinds_or_category_are_tagged() -> None:
    old = {
        "gold": "Los Angeles",
        "answer": "Chicago",
        "status": "finished",
        "trajectory": [
            {
                "thought": "",
                "action": "Search[Ed Wood]",
                "observation": "He died in Los Angeles.",
                "raw": "",
            },
            {"thought": "", "action": "Finish[Chicago]", "observation": "", "raw": ""},
        ],
    }
    assert categorize(old) == "unsupported_finish"
    assert count_categories([old, {**old, "answer": "Los Angeles"}])["correct"] == 1


def test_gold_must_appear_as_whole_words() -> None:
    record = {
        "gold": "Wood",
        "answer": "Denver",
        "status": "finished",
        "trajectory": [
            {
                "thought": "",
                "action": "Search[Woodstock]",
                "observation": "Woodstock was a festival.",
                "kind": "executed",
            },
            {"thought": "", "action": "Finish[Denver]", "observation": "", "kind": "finish"},
        ],
    }
    assert categorize(record) == "search_miss"
