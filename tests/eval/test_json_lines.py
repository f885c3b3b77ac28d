r"""JSON-lines files: a record written is a record read, whatever characters its text holds.

`str.splitlines()` also breaks lines at U+2028, U+2029, U+0085 (and \x1c-\x1e, \v, \f),
which `json.dumps(..., ensure_ascii=False)` writes raw: every reader splits on "\n" only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support import EVAL_DATA, eval_args
from typer.testing import CliRunner

from wikireact._json_text import json_line, json_lines
from wikireact.cli.app import app
from wikireact.eval.dataset import load_dataset
from wikireact.eval.harness import read_records
from wikireact.eval.html_report import page_data
from wikireact.eval.runs import Run, load_runs

SEPARATORS = "\u2028\u2029\u0085\x1c\x1d\x1e\x0b\x0c\r"
"""Every character `str.splitlines()` breaks a line at, besides the newline."""

# Every code point class (general category) but lone surrogates, which UTF-8 cannot hold.
TEXT = st.text(
    st.one_of(st.characters(exclude_categories=["Cs"]), st.sampled_from(SEPARATORS)),
    max_size=40,
)


def record(qid: str, seed: int, text: str) -> dict[str, Any]:
    return {
        "id": qid,
        "seed": seed,
        "question": text,
        "gold": text,
        "answer": text,
        "trajectory": [{"thought": text, "action": "Finish[x]", "observation": text}],
    }


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=5))
def test_a_record_written_is_a_record_read(texts: list[str]) -> None:
    records = [record(f"q{i}", 0, text) for i, text in enumerate(texts)]
    written = "".join(json_line(r) for r in records)
    assert written.count("\n") == len(records)
    assert [json.loads(line) for _, line in json_lines(written)] == records
    # escaped as well: tools that split lines as str.splitlines() does read them whole too
    assert [json.loads(line) for line in written.splitlines()] == records


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_every_reader_of_records_and_datasets_reads_each_one(
    tmp_path_factory: Any, texts: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("run")
    records = [record(f"q{i}", 0, text + "?") for i, text in enumerate(texts)]
    # written raw, as other tools (and earlier wikireact versions) write JSON lines
    raw = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    (folder / "trajectories.jsonl").write_text(raw, encoding="utf-8")
    assert list(read_records(folder / "trajectories.jsonl").values()) == records
    assert Run(folder, {}, "run", show_protocol=False).records() == records
    # A dataset's question may hold any text but U+0000, which is refused in one line (it names
    # threads and registry rows, and PostgreSQL text cannot hold it: test_nul_text.py).
    questions = [{**r, "question": r["question"].replace("\x00", "")} for r in records]
    dataset = folder / "dev.jsonl"
    dataset.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in questions), encoding="utf-8"
    )
    assert [item.question for item in load_dataset(dataset)] == [
        r["question"].strip() for r in questions
    ]


def test_eval_keeps_records_with_line_separators_in_their_text(
    snapshot_db: Path, tmp_path: Path, data_dir: Path
) -> None:
    """A thought and a question holding U+2028/U+2029/U+0085: counted, resumed once, browsable."""
    dataset = tmp_path / "dev.jsonl"
    items = [
        {**EVAL_DATA[0], "question": "Were Scott Derrickson\u2028and Ed Wood of one nationality?"},
        EVAL_DATA[1],
    ]
    # a JSON-lines dataset as another tool writes it: raw U+2028 in the question
    dataset.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                "Thought: line one\u2028line two\u2029and\u0085three.\nAction: Search[Ed Wood]",
                "Thought: done.\nAction: Finish[yes]",
            ]
        )
    )
    out = tmp_path / "out"
    runner = CliRunner()
    first = runner.invoke(app, eval_args(dataset, snapshot_db, script, out))
    assert first.exit_code == 0, first.output

    def questions() -> int:
        report = json.loads((out / "report.json").read_text())
        return int(report["metrics"]["per_seed"]["0"]["questions"])

    assert questions() == 2
    for _ in range(2):
        again = runner.invoke(app, [*eval_args(dataset, snapshot_db, script, out), "--resume"])
        assert again.exit_code == 0, again.output
    text = (out / "trajectories.jsonl").read_text(encoding="utf-8")
    assert text.count("\n") == 2  # nothing was run (and appended) again
    assert questions() == 2
    data = page_data(load_runs([out]))
    assert sorted(q["id"] for q in data["questions"]) == ["q1", "q2"]
    assert "line one\u2028line two\u2029and\u0085three." in data["texts"]
