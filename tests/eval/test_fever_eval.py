"""FEVER evaluations: every method through the CLI with scripted models, the dataset, the paper's sample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import FEVER_DATA, FEVER_PAGES, flat, write_snapshot
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.errors import DatasetError
from wikireact.eval.dataset import load_dataset, sample

runner = CliRunner()
SUP, REF, NEI = (str(r["id"]) for r in FEVER_DATA)
SEARCH_NIKOLAJ = "Thought 1: I search him.\nAction 1: Search[Nikolaj Coster-Waldau]"
SEARCH_STRANGER = "Thought 1: I search it.\nAction 1: Search[Stranger Things]"
SCRIPTS: dict[str, dict[str, list[str]]] = {
    "standard": {
        SUP: ["Answer: supports"],
        REF: ["Answer: REFUTES"],
        NEI: ["Answer: I am not sure"],
    },
    "cot": {
        SUP: ["Thought: He was in Fox films.\nAnswer: Supported"],
        REF: ["Thought: It is set in Hawkins.\nAnswer: refutes."],
        NEI: ["Thought: I think he sails.\nAnswer: SUPPORTS"],
    },
    "cot-sc": {
        SUP: ["Answer: SUPPORTS", "Answer: supports", "Answer: REFUTES"],
        REF: ["Answer: REFUTES", "Answer: NOT ENOUGH INFO", "Answer: refuted"],
        NEI: ["Answer: not enough info.", "Answer: SUPPORTS", "Answer: NOT ENOUGH INFORMATION"],
    },
    "react": {
        SUP: [SEARCH_NIKOLAJ, "Thought 2: Fox.\nAction 2: Finish[supported]"],
        REF: [SEARCH_STRANGER, "Thought 2: Indiana.\nAction 2: Finish[SUPPORTS]"],
        NEI: [
            SEARCH_NIKOLAJ,
            "Thought 2: hm.\nAction 2: Finish[maybe]",
            "Thought 3: no word of sailing.\nAction 3: Finish[NOT ENOUGH INFORMATION]",
        ],
    },
    "act": {
        SUP: ["Action 1: Search[Nikolaj Coster-Waldau]", "Action 2: Finish[SUPPORTS]"],
        REF: ["Action 1: Search[Stranger Things]", "Action 2: Finish[REFUTES]"],
        NEI: ["Action 1: Search[Sailing]", "Action 2: Finish[REFUTES]"],
    },
    # 2 of 3 agree (no switch), all differ (switch: the episode reads the script from its
    # start, so its first three steps are invalid), 2 of 3 agree.
    "cot-sc-react": {
        SUP: ["Answer: SUPPORTS", "Answer: SUPPORTS", "Answer: REFUTES"],
        REF: [
            "Answer: SUPPORTS",
            "Answer: REFUTES",
            "Answer: NOT ENOUGH INFO",
            "Action: Search[Stranger Things]",
            "Action: Finish[refuted]",
        ],
        NEI: ["Answer: NOT ENOUGH INFO", "Answer: nei", "Answer: SUPPORTS"],
    },
    # --max-steps 2: the second claim's episode runs out of budget, then CoT-SC votes.
    "react-cot-sc": {
        SUP: [SEARCH_NIKOLAJ, "Thought 2: Fox.\nAction 2: Finish[SUPPORTS]"],
        REF: ["Answer: REFUTES", "Answer: REFUTES", "Answer: SUPPORTS"],
        NEI: [SEARCH_NIKOLAJ, "Thought 2: nothing.\nAction 2: Finish[NOT ENOUGH INFO]"],
    },
}
EXPECTED: dict[str, dict[str, str | None]] = {
    "standard": {SUP: "SUPPORTS", REF: "REFUTES", NEI: "I am not sure"},
    "cot": {SUP: "SUPPORTS", REF: "REFUTES", NEI: "SUPPORTS"},
    "cot-sc": {SUP: "SUPPORTS", REF: "REFUTES", NEI: "NOT ENOUGH INFO"},
    "react": {SUP: "SUPPORTS", REF: "SUPPORTS", NEI: "NOT ENOUGH INFO"},
    "act": {SUP: "SUPPORTS", REF: "REFUTES", NEI: "REFUTES"},
    "cot-sc-react": {SUP: "SUPPORTS", REF: "REFUTES", NEI: "NOT ENOUGH INFO"},
    "react-cot-sc": {SUP: "SUPPORTS", REF: "REFUTES", NEI: "NOT ENOUGH INFO"},
}


@pytest.fixture
def fever_files(tmp_path: Path, data_dir: Path) -> tuple[Path, Path]:
    """FEVER_DATA as a JSON-lines file, and a snapshot of FEVER_PAGES."""
    dataset = tmp_path / "paper_dev.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in FEVER_DATA))
    return dataset, write_snapshot(tmp_path / "fever.db", FEVER_PAGES)


def run_fever(
    files: tuple[Path, Path], tmp_path: Path, method: str, *extra: str
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], str]:
    """Run `wikireact eval --task fever --method METHOD` with METHOD's script; return report, records, output."""
    dataset, snapshot = files
    script = tmp_path / f"{method}.json"
    script.write_text(json.dumps(SCRIPTS[method]))
    out = tmp_path / method
    args = ["eval", str(dataset), "--task", "fever", "--method", method, "--out", str(out)]
    args += ["--model", f"scripted:{script}", "--wiki", str(snapshot), "--sc-samples", "3"]
    result = runner.invoke(app, [*args, *extra])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    records = {r["id"]: r for r in map(json.loads, lines)}
    return report, records, result.output


@pytest.mark.parametrize("method", list(SCRIPTS))
def test_every_method_labels_claims_and_is_scored_by_accuracy(
    method: str, fever_files: tuple[Path, Path], tmp_path: Path
) -> None:
    extra = ("--max-steps", "2") if method == "react-cot-sc" else ()
    report, records, output = run_fever(fever_files, tmp_path, method, *extra)
    assert {i: r["answer"] for i, r in records.items()} == EXPECTED[method]
    gold = {str(r["id"]): r["label"] for r in FEVER_DATA}
    correct = sum(EXPECTED[method][i] == gold[i] for i in gold)
    assert report["metrics"]["mean"]["accuracy"] == pytest.approx(correct / 3)
    assert report["metrics"]["mean"]["em"] == report["metrics"]["mean"]["accuracy"]
    assert report["settings"]["task"] == "fever"
    assert all(r["task"] == "fever" and r["f1"] == r["em"] for r in records.values())
    assert report["metrics"]["labels"] == {"SUPPORTS": 1, "REFUTES": 1, "NOT ENOUGH INFO": 1}
    assert "wikireact evaluation: FEVER" in flat(output)
    assert "FEVER confusion" in flat(output)


def test_react_episodes_record_labels_confusion_and_claim_categories(
    fever_files: tuple[Path, Path], tmp_path: Path
) -> None:
    report, records, output = run_fever(fever_files, tmp_path, "react")
    assert "3/3 (100%), acc 66.7%" in flat(output)  # the progress names FEVER's score
    metrics = report["metrics"]
    assert metrics["confusion"]["REFUTES"] == {
        "SUPPORTS": 1,
        "REFUTES": 0,
        "NOT ENOUGH INFO": 0,
        "none": 0,
    }
    assert metrics["confusion"]["SUPPORTS"]["SUPPORTS"] == 1
    assert metrics["confusion"]["NOT ENOUGH INFO"]["NOT ENOUGH INFO"] == 1
    mean = metrics["mean"]
    assert (mean["precision_supports"], mean["recall_supports"]) == (0.5, 1.0)
    assert (mean["precision_refutes"], mean["recall_refutes"]) == (0.0, 0.0)
    assert (mean["precision_nei"], mean["recall_nei"]) == (1.0, 1.0)
    assert records[REF]["category"] == "evidence_wrong"  # Stranger Things was opened
    assert records[NEI]["trajectory"][1]["kind"] == "invalid"  # Finish[maybe]
    assert mean["invalid_action_rate"] == pytest.approx(1 / 7)


def test_claim_categories_search_miss_and_no_label(
    fever_files: tuple[Path, Path], tmp_path: Path
) -> None:
    _, acted, _ = run_fever(fever_files, tmp_path, "act")
    assert acted[NEI]["category"] == "search_miss"  # Sailing: no page opened
    _, standard, _ = run_fever(fever_files, tmp_path, "standard")
    assert standard[NEI]["category"] == "invalid_format"  # "I am not sure" is no label
    report = json.loads((tmp_path / "standard" / "report.json").read_text())
    assert report["metrics"]["confusion"]["NOT ENOUGH INFO"]["none"] == 1


def test_hybrids_switch_as_for_hotpotqa(fever_files: tuple[Path, Path], tmp_path: Path) -> None:
    _, weak, _ = run_fever(fever_files, tmp_path, "cot-sc-react")
    assert [weak[i]["switched"] for i in (SUP, REF, NEI)] == [False, True, False]
    assert [s["kind"] for s in weak[REF]["trajectory"]][-2:] == ["executed", "finish"]
    _, fallback, _ = run_fever(fever_files, tmp_path, "react-cot-sc", "--max-steps", "2")
    assert [fallback[i]["switched"] for i in (SUP, REF, NEI)] == [False, True, False]
    assert fallback[REF]["status"] == "budget_exhausted"
    assert fallback[REF]["votes"]["votes"] == 2


def test_fever_jsonl_ids_may_be_integers_and_duplicates_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in FEVER_DATA))
    items = load_dataset(path, "fever")
    assert [(i.id, i.answer) for i in items] == [
        ("75397", "SUPPORTS"),
        ("150448", "REFUTES"),
        ("214861", "NOT ENOUGH INFO"),
    ]
    assert items[0].question.startswith("Nikolaj Coster-Waldau worked")
    assert items[0].pages == ("Nikolaj Coster-Waldau",)
    assert items[2].pages == ()
    twice = [*FEVER_DATA, {**FEVER_DATA[1], "id": "75397"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in twice))
    with pytest.raises(DatasetError, match=r"duplicate question ids '75397' \(items 0, 3\)"):
        load_dataset(path, "fever")


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"id": 1, "claim": "x", "label": "TRUE"}, "has label 'TRUE'; a FEVER label is SUPPORTS"),
        ({"id": 1, "label": "SUPPORTS"}, "item 0 needs a text field claim"),
        ({"id": 1, "claim": "  ", "label": "SUPPORTS"}, "item 0 has an empty claim"),
        ({"question": "q?", "answer": "a"}, r"claim \(a HotpotQA question\? use --task hotpotqa\)"),
        ({"id": True, "claim": "x", "label": "REFUTES"}, "has an id that is not text"),
    ],
)
def test_bad_claims_are_refused_in_one_line(
    record: dict[str, Any], message: str, tmp_path: Path
) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(DatasetError, match=message):
        load_dataset(path, "fever")


def test_a_fever_file_read_as_hotpotqa_says_which_task(tmp_path: Path) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text(json.dumps(FEVER_DATA[0]) + "\n")
    with pytest.raises(DatasetError, match=r"a FEVER claim\? use --task fever"):
        load_dataset(path)


def test_the_papers_fever_sample_is_drawn_from_the_first_7405_claims(tmp_path: Path) -> None:
    labels = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
    path = tmp_path / "paper_dev.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": 100_000 + n, "claim": f"Claim {n}.", "label": labels[n % 3]}) + "\n"
            for n in range(9_999)
        )
    )
    items = load_dataset(path, "fever")
    drawn = sample(items, 500, 233, "fever")
    # The ReAct paper's FEVER notebook prints these indices first (3687 is "Paramore is not
    # from Tennessee."): its `random.Random(233).shuffle(list(range(7405)))`.
    assert [int(i.id) - 100_000 for i in drawn[:8]] == [
        3687,
        6238,
        5388,
        3522,
        3824,
        2866,
        1551,
        2544,
    ]
    assert len(drawn) == 500 and max(int(i.id) - 100_000 for i in drawn) < 7405
    assert len(sample(items, None, 233, "fever")) == 7405
    # HotpotQA's rule (shuffle every index) would draw others from the same file.
    assert [int(i.id) - 100_000 for i in sample(items, 3, 233)] == [8359, 4383, 2153]
    assert len(sample(items, None, None, "fever")) == 9_999  # no shuffle: the whole file


def test_eval_task_fever_with_the_paper_sample_options(
    tmp_path: Path, fever_files: tuple[Path, Path]
) -> None:
    _, snapshot = fever_files
    path = tmp_path / "paper_dev.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": n, "claim": f"Claim {n}.", "label": "NOT ENOUGH INFO"}) + "\n"
            for n in range(7_500)
        )
    )
    script = tmp_path / "nei.json"
    script.write_text(json.dumps(["Thought: nothing.\nAction: Finish[not enough info]"]))
    result = runner.invoke(
        app,
        ["eval", str(path), "--task", "fever", "--sample-seed", "233", "--limit", "3"]
        + ["--model", f"scripted:{script}", "--wiki", str(snapshot), "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 0, result.output
    ids = [json.loads(line)["id"] for line in (tmp_path / "o" / "trajectories.jsonl").open()]
    assert sorted(ids) == sorted(["3687", "6238", "5388"])
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["metrics"]["mean"]["accuracy"] == 1.0


def test_a_shared_fever_run_reports_what_one_process_reports(
    fever_files: tuple[Path, Path], tmp_path: Path, pg_url: str
) -> None:
    from support import eval_config

    from wikireact import ScriptedChatModel
    from wikireact.eval.run import run_eval
    from wikireact.wiki.snapshot import SnapshotSource

    dataset, snapshot = fever_files
    reports = {
        name: run_eval(
            eval_config(dataset, snapshot, "react", task="fever", seeds=2),
            tmp_path / name,
            model=ScriptedChatModel(by_question=SCRIPTS["react"]),  # type: ignore[arg-type]
            wiki=SnapshotSource.open(snapshot),
            db=pg_url if name == "shared" else None,
            run="fever" if name == "shared" else None,
        )
        for name in ("single", "shared")
    }
    single, shared = (reports[n]["metrics"] for n in ("single", "shared"))
    assert shared["mean"]["accuracy"] == single["mean"]["accuracy"] == pytest.approx(2 / 3)
    assert shared["confusion"] == single["confusion"] and shared["labels"] == single["labels"]
    assert reports["shared"]["settings"]["task"] == "fever"
