"""`wikireact eval report DIR...`: tables that fit, run labels, the paper's rows, plots, bad reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from support import write_snapshot
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.eval.categories import CATEGORIES
from wikireact.eval.paper import PAPER_EM
from wikireact.eval.report import categories_table, comparison_table
from wikireact.eval.runs import load_runs
from wikireact.models.scripted import ScriptOutput

DATA = [
    {
        "_id": "q1",
        "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
        "answer": "yes",
    },
    {"_id": "q2", "question": "Where was Ed Wood born?", "answer": "Poughkeepsie, New York"},
    {"_id": "q3", "question": "Which city does Scott Derrickson live in?", "answer": "Los Angeles"},
    {"_id": "q4", "question": "Where did Ed Wood die?", "answer": "Los Angeles"},
]
SCRIPT: list[ScriptOutput] = [
    "Thought: look him up.\nAction: Search[Scott Derrickson]",
    "Thought: next.\nAction: Serch[Ed Wood]",
    "Thought: again.\nAction: Search[Ed Wood]",
    "Thought: born?\nAction: Lookup[born]",
    "Thought: done.\nAction: Finish[Poughkeepsie, New York]",
]
METHODS = ("react", "act", "cot")


def make_runs(root: Path) -> list[Path]:
    """Evaluate DATA with three methods through the CLI; return the run folders."""
    root.mkdir(parents=True, exist_ok=True)
    dataset, script = root / "dev.json", root / "script.json"
    dataset.write_text(json.dumps(DATA))
    script.write_text(json.dumps(SCRIPT))
    snapshot = write_snapshot(root / "snap.db")
    runs = []
    for method in METHODS:
        out = root / "runs" / f"{method}-run"
        result = CliRunner().invoke(
            app,
            [
                "eval",
                str(dataset),
                "--method",
                method,
                "--model",
                f"scripted:{script}",
                "--wiki",
                str(snapshot),
                "--out",
                str(out),
                "--concurrency",
                "2",
            ],
        )
        assert result.exit_code == 0, result.output
        runs.append(out)
    return runs


def one_line(text: str) -> str:
    """Undo Rich's wrapping of a message printed to a non-terminal."""
    return "".join(text.splitlines())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return make_runs(tmp_path_factory.mktemp("report"))


def test_report_with_paper_plot_and_browser(runs: list[Path], tmp_path: Path) -> None:
    png, page = tmp_path / "cmp.png", tmp_path / "cmp.html"
    result = CliRunner().invoke(
        app, ["eval", "report", *map(str, runs), "--paper", "--plot", str(png), "--html", str(page)]
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    for run in runs:
        assert run.name in out
    assert "paper (PaLM-540B)" in out and "different model" in out
    for em in PAPER_EM.values():
        assert f"{em:.1f}" in out
    assert "search" in out and "unseen," in out  # the category table
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    text = page.read_text()
    assert (
        "<script src" not in text
        and "<link" not in text
        and "http://" not in text.split("<script id")[0]
    )
    for run in runs:
        report = json.loads((run / "report.json").read_text())
        assert sum(report["metrics"]["categories"].values()) == len(DATA)
        records = [
            json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()
        ]
        assert all(r["category"] in CATEGORIES for r in records)


def test_category_counts_in_the_table(runs: list[Path]) -> None:
    console = Console(width=200, record=True)
    console.print(categories_table(load_runs(runs)))
    react_row = next(
        line for line in console.export_text().splitlines() if line.strip().startswith("react-run")
    )
    counts = json.loads((runs[0] / "report.json").read_text())["metrics"]["categories"]
    assert react_row.split()[1:] == [str(counts[key]) for key in CATEGORIES]


def test_svg_plot_and_a_bad_plot_name(runs: list[Path], tmp_path: Path) -> None:
    svg = tmp_path / "cmp.svg"
    ok = CliRunner().invoke(app, ["eval", "report", str(runs[0]), "--plot", str(svg), "--paper"])
    assert ok.exit_code == 0, ok.output
    assert "<svg" in svg.read_text()
    bad = CliRunner().invoke(
        app, ["eval", "report", str(runs[0]), "--plot", str(tmp_path / "cmp.jpg")]
    )
    assert bad.exit_code == 2 and "must end in .png or .svg" in one_line(bad.stderr)


@pytest.mark.parametrize("width", [80, 100])
def test_tables_fit_narrow_terminals(runs: list[Path], tmp_path: Path, width: int) -> None:
    # a long folder name, a model and protocol, spreads across seeds and 4-digit counts
    long = tmp_path / "cot-sc-react-qwen3.6-27b-tools-3-seeds"
    shutil.copytree(runs[0], long)
    report = json.loads((long / "report.json").read_text())
    report["settings"].update(
        method="cot-sc-react", model="groq:qwen/qwen3.6-27b", protocol="tools"
    )
    report["metrics"]["std"] = {key: 0.0123 for key in report["metrics"]["std"]}
    report["metrics"]["categories"] = {key: 1500 for key in CATEGORIES}
    (long / "report.json").write_text(json.dumps(report))
    console = Console(width=width, record=True)
    console.print(comparison_table(load_runs([*runs, long]), paper=True))
    console.print(categories_table(load_runs([*runs, long])))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text  # nothing is cut off: long cells wrap
    assert "±1.2" in text and "1500" in text  # numbers are never split
    for name in [*(run.name for run in runs), "scripted:script.json", "tools"]:
        assert name in text
    assert "cot-sc-react-q" in text and "seeds" in text  # a long label wraps within its column


def test_wide_table_has_every_metric(runs: list[Path]) -> None:
    narrow = CliRunner().invoke(app, ["eval", "report", str(runs[0])])
    wide = CliRunner().invoke(app, ["eval", "report", str(runs[0]), "--wide"])
    assert wide.exit_code == 0 and narrow.exit_code == 0
    assert "p95 s" in wide.stdout and "p95 s" not in narrow.stdout
    assert "EM" in narrow.stdout and "F1" in narrow.stdout


def test_rows_name_their_run_model_and_protocol(runs: list[Path], tmp_path: Path) -> None:
    tools = tmp_path / "react-tools"
    shutil.copytree(runs[0], tools)
    report = json.loads((tools / "report.json").read_text())
    report["settings"].update(protocol="tools", model="groq:qwen/qwen3.6-27b")
    (tools / "report.json").write_text(json.dumps(report))
    result = CliRunner().invoke(app, ["eval", "report", str(runs[0]), str(tools)])
    assert result.exit_code == 0, result.output
    assert "react-run" in result.stdout and "react-tools" in result.stdout
    assert (
        "groq:qwen/qwen3.6-27b · tools" in result.stdout
        and "scripted:script.json · text" in result.stdout
    )
    alone = CliRunner().invoke(app, ["eval", "report", str(runs[0])])
    assert (
        "scripted:script.json" in alone.stdout and "· text" not in alone.stdout
    )  # the default goes unsaid


def test_same_folder_names_are_told_apart(runs: list[Path], tmp_path: Path) -> None:
    other = tmp_path / "b" / runs[0].name
    shutil.copytree(runs[0], other)
    result = CliRunner().invoke(app, ["eval", "report", str(runs[0]), str(other)])
    assert result.exit_code == 0
    assert str(other) in result.stdout.replace("\n", "") or "b/react-run" in result.stdout


BAD_REPORTS = {
    "list": ("[]", "not a JSON object"),
    "empty": ("{}", "settings.method is missing"),
    "no metrics": ('{"settings": {"method": "react"}}', "metrics is missing"),
    "no em": (
        '{"settings": {"method": "react"}, "metrics": {"mean": {"f1": 0}, "std": {}, "per_seed": {}}}',
        "metrics.mean.em is missing",
    ),
    "text em": (
        '{"settings": {"method": "react"}, "metrics": {"mean": {"em": "x", "f1": 0}, "std": {}, '
        '"per_seed": {}}}',
        "metrics.mean.em is not a number",
    ),
    "bad seed": (
        '{"settings": {"method": "react"}, "metrics": {"mean": {"em": 0, "f1": 0}, "std": {}, '
        '"per_seed": {"0": 3}}}',
        "metrics.per_seed.0",
    ),
    "broken": ('{"settings": ', "not valid JSON"),
}


@pytest.mark.parametrize("name", list(BAD_REPORTS))
def test_bad_report_json_is_one_clear_line(tmp_path: Path, name: str) -> None:
    content, message = BAD_REPORTS[name]
    (tmp_path / "report.json").write_text(content)
    result = CliRunner().invoke(app, ["eval", "report", str(tmp_path)])
    assert result.exit_code == 2
    # one message (Rich wraps it at 80 columns when stderr is not a terminal)
    assert result.stderr.startswith("error:") and result.stderr.count("error:") == 1
    assert message in one_line(result.stderr) and "Traceback" not in result.output


def test_missing_run_and_report_only_flags(tmp_path: Path) -> None:
    missing = CliRunner().invoke(app, ["eval", "report", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "no report.json" in one_line(missing.stderr)
    misplaced = CliRunner().invoke(app, ["eval", str(tmp_path / "data.json"), "--paper"])
    assert (
        misplaced.exit_code == 2 and "No such option: --paper" in misplaced.stderr
    )  # a report option


def test_runs_from_before_categories_are_tagged_from_their_trajectories(
    runs: list[Path], tmp_path: Path
) -> None:
    old = tmp_path / "old-react"
    shutil.copytree(runs[0], old)
    report = json.loads((old / "report.json").read_text())
    expected = report["metrics"].pop("categories")
    (old / "report.json").write_text(json.dumps(report))
    records = [json.loads(line) for line in (old / "trajectories.jsonl").read_text().splitlines()]
    for record in records:
        del record["category"]
        for step in record["trajectory"]:
            step.pop("kind", None)  # records written before steps had kinds
    (old / "trajectories.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert load_runs([old])[0].categories() == expected


@pytest.mark.parametrize(("columns", "flags"), [(80, []), (100, []), (80, ["--wide"])])
def test_report_at_a_real_terminal_width(runs: list[Path], columns: int, flags: list[str]) -> None:
    """`eval report` in a pseudo-terminal of 80 and 100 columns: nothing wider, nothing cut."""
    import os
    import pty
    import re
    import subprocess
    import sys

    leader, follower = pty.openpty()
    env = {
        **os.environ,
        "COLUMNS": str(columns),
        "LINES": "50",
        "TERM": "xterm-256color",
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "wikireact", "eval", "report", *map(str, runs), "--paper", *flags],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert process.wait(timeout=60) == 0
    os.close(leader)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode()).replace("\r", "")
    assert "paper (PaLM-540B)" in text and "react-run" in text
    assert max(len(line) for line in text.splitlines()) <= columns
    assert "…" not in text
    if flags:
        assert "p95 s" in text and "(4/4)" in text  # every metric, in tables that fit
