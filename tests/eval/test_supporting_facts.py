"""Supporting-fact metrics: HotpotQA's official definitions, and the evaluation's report of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import (
    EVAL_DATA,
    EVAL_SCRIPT,
    FEVER_DATA,
    FEVER_PAGES,
    SpyModel,
    snapshot_eval,
    write_snapshot,
)

from wikireact.eval.report import COLUMNS, task_columns
from wikireact.eval.runs import load_runs
from wikireact.eval.supporting_facts import SP_METRICS, joint_scores, sp_scores
from wikireact.models.scripted import ScriptOutput

A0, B1, C2 = ["A", 0], ["B", 1], ["C", 2]


@pytest.mark.parametrize(
    ("predicted", "gold", "em", "precision", "recall", "f1"),
    [
        ([A0, B1], [A0, B1], 1.0, 1.0, 1.0, 1.0),
        ([A0, C2], [A0, B1], 0.0, 0.5, 0.5, 0.5),  # partial
        ([A0, B1, C2], [A0, B1], 0.0, 2 / 3, 1.0, 0.8),  # one too many
        ([], [A0], 0.0, 0.0, 0.0, 0.0),  # nothing predicted
        ([A0, A0, B1], [A0, B1], 1.0, 1.0, 1.0, 1.0),  # a duplicate counts once (a set)
        ([], [], 1.0, 0.0, 0.0, 0.0),  # the evaluator's edge: equal empty sets, F1 0
        ([["A", "0"], ["B", True]], [A0], 0.0, 0.0, 0.0, 0.0),  # malformed pairs ignored
        ([("A", 0)], [A0], 1.0, 1.0, 1.0, 1.0),  # tuples and lists alike
    ],
)
def test_sp_scores_follow_the_official_update_sp(
    predicted: list[Any], gold: list[Any], em: float, precision: float, recall: float, f1: float
) -> None:
    assert sp_scores(predicted, gold) == pytest.approx((em, precision, recall, f1))


@pytest.mark.parametrize(
    ("answer", "gold", "predicted", "expected"),
    [
        ("Paris", "Paris", [A0, B1], (1.0, 1.0, 1.0, 1.0)),
        # answer P 1/2, R 1; facts P 1/2, R 1/2: joint P 1/4, R 1/2, F1 1/3
        ("Paris, France", "Paris", [A0, C2], (0.0, 0.5, 0.0, 1 / 3)),
        ("yes", "no", [A0, B1], (1.0, 1.0, 0.0, 0.0)),  # a differing yes/no scores 0
        (None, "Paris", [A0, B1], (1.0, 1.0, 0.0, 0.0)),
        ("Paris", "Paris", [], (0.0, 0.0, 0.0, 0.0)),
    ],
)
def test_joint_scores_follow_the_official_definitions(
    answer: str | None, gold: str, predicted: list[Any], expected: tuple[float, ...]
) -> None:
    scores = joint_scores(answer, gold, predicted, [A0, B1])
    got = (scores["sp_em"], scores["sp_f1"], scores["joint_em"], scores["joint_f1"])
    assert got == pytest.approx(expected)


def test_the_evaluation_reports_sp_metrics_for_data_with_supporting_facts(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    _, snapshot = files
    data: list[dict[str, Any]] = [dict(item) for item in EVAL_DATA]
    data[1]["supporting_facts"] = [["Ed Wood", 2]]  # the script's answer, and its sentence
    data[2]["supporting_facts"] = [["Scott Derrickson", 1], ["Scott Derrickson", 1]]
    dataset = tmp_path / "facts.json"
    dataset.write_text(json.dumps(data))
    report = snapshot_eval(dataset, snapshot, tmp_path / "out", SpyModel(outputs=EVAL_SCRIPT))
    mean = report["metrics"]["mean"]
    # q2: right answer citing its gold sentence; q3: wrong answer citing another page, but the
    # gold sentence was shown (a reasoning miss); q1 and q4 have no facts and are not averaged
    assert {k: mean[k] for k in SP_METRICS} == pytest.approx(
        {"sp_em": 0.5, "sp_f1": 0.5, "joint_em": 0.5, "joint_f1": 0.5, "sp_seen_recall": 1.0}
    )
    by_category = report["metrics"]["sp_by_category"]
    assert by_category["correct"] == pytest.approx(
        {"questions": 1, "sp_em": 1, "sp_f1": 1, "joint_em": 1, "joint_f1": 1, "sp_seen_recall": 1}
    )
    wrong = by_category["evidence_wrong"] | by_category.get("no_evidence_wrong", {})
    assert (wrong["sp_f1"], wrong["sp_seen_recall"]) == (0.0, 1.0)  # seen, not cited: reasoning
    records = [json.loads(line) for line in (tmp_path / "out" / "trajectories.jsonl").open()]
    assert {r["id"]: "sp_em" in r for r in records} == {
        "q1": False,
        "q2": True,
        "q3": True,
        "q4": False,
    }
    assert {key for _, key, _, _ in COLUMNS} >= set(SP_METRICS)


def test_data_without_supporting_facts_report_no_sp_metrics(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    report = snapshot_eval(dataset, snapshot, tmp_path / "out", SpyModel(outputs=EVAL_SCRIPT))
    assert not set(SP_METRICS) & report["metrics"]["mean"].keys()


def test_the_wide_report_shows_sp_columns_only_for_runs_that_have_them(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    snapshot_eval(dataset, snapshot, tmp_path / "plain", SpyModel(outputs=EVAL_SCRIPT))
    data = [{**item, "supporting_facts": [["Ed Wood", 2]]} for item in EVAL_DATA]
    with_facts = tmp_path / "facts.json"
    with_facts.write_text(json.dumps(data))
    snapshot_eval(with_facts, snapshot, tmp_path / "facts", SpyModel(outputs=EVAL_SCRIPT))
    plain = [key for _, key, _, _ in task_columns(load_runs([tmp_path / "plain"]))]
    both = [
        key for _, key, _, _ in task_columns(load_runs([tmp_path / "plain", tmp_path / "facts"]))
    ]
    assert not set(SP_METRICS) & set(plain) and set(SP_METRICS) <= set(both)


def test_fever_reports_evidence_recall_against_the_claims_gold_sentences(tmp_path: Path) -> None:
    dataset = tmp_path / "claims.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in FEVER_DATA))
    snapshot = write_snapshot(tmp_path / "fever.db", FEVER_PAGES)
    script: list[ScriptOutput] = [
        "Thought 1: I search it.\nAction 1: Search[Stranger Things]",
        "Thought 2: It is set in the fictional town of Hawkins, Indiana.\nAction 2: Finish[REFUTES]",
    ]
    report = snapshot_eval(
        dataset, snapshot, tmp_path / "out", SpyModel(outputs=script), task="fever"
    )
    # the REFUTES claim's gold sentence (Stranger Things, 1) was shown and quoted; the SUPPORTS
    # claim's (Nikolaj Coster-Waldau, 7) never; the NOT ENOUGH INFO claim has none
    mean = report["metrics"]["mean"]
    assert (mean["evidence_recall"], mean["evidence_seen_recall"]) == (0.5, 0.5)
    assert not set(SP_METRICS) & mean.keys()
