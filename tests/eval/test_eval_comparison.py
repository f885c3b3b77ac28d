"""What a comparison of runs needs: the file's order, partial runs, intervals, paired tests, groups."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import write_snapshot
from typer.testing import CliRunner, Result

from wikireact.cli.app import app
from wikireact.eval.dataset import load_dataset, sample
from wikireact.eval.statistics import bootstrap_interval

QUESTIONS = 20


def finish(answer: str) -> list[str]:
    """A one-step episode that answers `answer`."""
    return [f"Thought: I know it.\nAction: Finish[{answer}]"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A dataset of QUESTIONS with HotpotQA's type and level, and a snapshot."""
    root = tmp_path_factory.mktemp("comparison")
    dataset = root / "dev.json"
    dataset.write_text(
        json.dumps(
            [
                {
                    "_id": f"q{i}",
                    "question": f"What is answer number {i}?",
                    "answer": f"answer {i}",
                    "type": "comparison" if i % 4 == 0 else "bridge",
                    "level": "hard" if i < 8 else "easy",
                }
                for i in range(QUESTIONS)
            ]
        )
    )
    return dataset, write_snapshot(root / "snap.db")


def right_on(tmp_path: Path, name: str, right: range) -> Path:
    """A script that answers the questions in `right` correctly and the rest wrongly."""
    script = tmp_path / f"{name}.json"
    outputs = {
        f"q{i}": finish(f"answer {i}" if i in right else "no idea") for i in range(QUESTIONS)
    }
    script.write_text(json.dumps({"outputs": outputs}))
    return script


def run_eval_cli(dataset: Path, snapshot: Path, script: Path, out: Path, *extra: str) -> Result:
    result = CliRunner().invoke(
        app,
        [
            "eval",
            str(dataset),
            "--model",
            f"scripted:{script}",
            "--wiki",
            str(snapshot),
            "--out",
            str(out),
            "--concurrency",
            "2",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return result


def report(*dirs: Path, extra: tuple[str, ...] = ()) -> str:
    result = CliRunner().invoke(app, ["eval", "report", *map(str, dirs), *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


def recorded_ids(out: Path) -> list[str]:
    return [
        json.loads(line)["id"] for line in (out / "trajectories.jsonl").read_text().splitlines()
    ]


def test_order_file_takes_the_files_first_questions(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = setup
    script = right_on(tmp_path, "all", range(QUESTIONS))
    first = tmp_path / "first"
    run_eval_cli(dataset, snapshot, script, first, "--limit", "5", "--order", "file")
    assert sorted(recorded_ids(first)) == sorted(f"q{i}" for i in range(5))
    assert json.loads((first / "report.json").read_text())["settings"]["order"] == "file"
    assert "file order, not the paper's sample" in report(first)
    # the default stays the paper's seed-233 sample, and says so
    sampled = tmp_path / "sampled"
    run_eval_cli(dataset, snapshot, script, sampled, "--limit", "5")
    paper = [item.id for item in sample(load_dataset(dataset), 5, 233)]
    assert sorted(recorded_ids(sampled)) == sorted(paper) != sorted(recorded_ids(first))
    assert json.loads((sampled / "settings.json").read_text())["order"] == "paper"
    assert "file order" not in report(sampled)
    bad = CliRunner().invoke(app, ["eval", str(dataset), "--order", "random"])
    assert bad.exit_code == 2 and "--order must be one of paper, file" in bad.stderr


def test_a_run_that_has_not_finished_is_reported_as_partial(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = setup
    script = right_on(tmp_path, "half", range(0, QUESTIONS, 2))
    out = tmp_path / "stopped"
    run_eval_cli(dataset, snapshot, script, out, "--order", "file", "--limit", "8")
    # what a stopped run leaves: its settings and the records of the questions it finished
    (out / "report.json").unlink()
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["id"] in ("q0", "q1", "q2")]
    (out / "trajectories.jsonl").write_text("\n".join(kept) + "\n")
    page = tmp_path / "page.html"
    text = report(out, extra=("--html", str(page)))
    assert "partial: 3 of 8 done" in text and "partial: 3 of 8 done" in page.read_text()
    assert f"{out}: partial, 3 of 8 (question, seed) pairs recorded" in " ".join(text.split())
    assert "66.7" in text  # EM of what is recorded: q0 and q2 right, q1 wrong
    nothing = tmp_path / "nothing"
    nothing.mkdir()
    (nothing / "settings.json").write_text((out / "settings.json").read_text())
    empty = CliRunner().invoke(app, ["eval", "report", str(nothing)])
    assert empty.exit_code == 2 and "has not finished a question yet" in empty.stderr


def test_intervals_paired_test_and_breakdowns(setup: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = setup
    one, two = tmp_path / "ten-right", tmp_path / "fifteen-right"
    run_eval_cli(dataset, snapshot, right_on(tmp_path, "ten", range(10)), one, "--order", "file")
    run_eval_cli(
        dataset, snapshot, right_on(tmp_path, "fifteen", range(15)), two, "--order", "file"
    )
    text = report(one, two, extra=("--wide",))
    assert report(one, two, extra=("--wide",)) == text  # seeded: the same numbers every time
    ids = sorted(f"q{i}" for i in range(QUESTIONS))  # the report resamples in order of id
    ems = [bootstrap_interval([float(int(q[1:]) < right) for q in ids]) for right in (10, 15)]
    for interval in ems:
        shown = f"{100 * interval.estimate:.1f}"
        assert shown in text
        assert f"[{100 * interval.low:.1f}, {100 * interval.high:.1f}]" in text
    assert ems[0].low < ems[0].estimate < ems[0].high
    # paired: the second run is right on 5 questions the first got wrong, never the reverse;
    # McNemar's exact p = 2 * (1/2)^5
    row = next(
        line for line in text.splitlines() if line.split()[:1] == ["ten-right"] and "+25.0" in line
    )
    assert row.split()[-3:] == ["0", "5", "0.0625"]
    # HotpotQA's type and level: 5 comparison questions, 15 bridge; 8 hard, 12 easy
    groups = [" ".join(g.split()) for g in re.findall(r"(?:type|level) \w+ +\d+", text)]
    assert groups == ["type bridge 15", "type comparison 5", "level easy 12", "level hard 8"] * 2
    # a record whose score is not a number (NaN, missing) is left out of the statistics
    records = [json.loads(line) for line in (one / "trajectories.jsonl").read_text().splitlines()]
    records[0]["em"] = float("nan")
    del records[1]["f1"]
    (one / "trajectories.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert "scores with 95% confidence intervals" in report(one, two)


def test_the_plot_shows_n_beside_the_papers_500(
    setup: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    monkeypatch.setitem(matplotlib.rcParams, "svg.fonttype", "none")  # text as text, to read it
    dataset, snapshot = setup
    out = tmp_path / "run"
    run_eval_cli(
        dataset, snapshot, right_on(tmp_path, "all", range(QUESTIONS)), out, "--limit", "6"
    )
    svg = tmp_path / "plot.svg"
    report(out, extra=("--paper", "--plot", str(svg)))
    text = svg.read_text()
    assert "n=6" in text and "n=500" in text
