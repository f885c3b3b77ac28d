"""Few-shot exemplars from a prompt file (the ReAct paper's layout), per-question scripts, progress."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import EVAL_DATA, EVAL_SCRIPT, SpyModel, eval_args, snapshot_eval
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.errors import PromptFileError
from wikireact.eval.baselines import cot_messages, standard_messages
from wikireact.prompting.exemplars import DEFAULT_PROMPTS, load_prompts, parse_episodes
from wikireact.prompting.react import build_messages

# Written for these tests in the layout of the paper's prompts_naive.json (not its text).
PAPER_LAYOUT = {
    "webthink_simple6": (
        "Question: Which river is longer, the Loire or the Seine?\n"
        "Thought 1: I need the length of the Loire first.\n"
        "Action 1: Search[Loire]\n"
        "Observation 1: The Loire is the longest river in France, at 1,006 km.\n"
        "Thought 2: Now the Seine.\n"
        "Action 2: Search[Seine]\n"
        "Observation 2: The Seine is a 777 km long river in northern France.\n"
        "Thought 3: 1,006 km is more than 777 km.\n"
        "Action 3: Finish[the Loire]\n"
        "Question: Who wrote the novel Solaris?\n"
        "Thought 1: Search the novel.\n"
        "Action 1: Search[Solaris (novel)]\n"
        "Observation 1: Solaris is a 1961 novel by Stanisław Lem.\n"
        "Thought 2: It is Lem.\n"
        "Action 2: Finish[Stanisław Lem]\n"
    ),
    "webact_simple6": (
        "Question: Who wrote the novel Solaris?\n"
        "Action 1: Search[Solaris (novel)]\n"
        "Observation 1: Solaris is a 1961 novel by Stanisław Lem.\n"
        "Action 2: Finish[Stanisław Lem]\n"
    ),
    "cotqa_simple6": (
        "Question: Who wrote the novel Solaris?\n"
        "Thought: Let's think step by step. Solaris is a novel by Stanisław Lem, so the answer is Stanisław Lem.\n"
        "Answer: Stanisław Lem\n"
    ),
}


def test_paper_layout_loads_for_every_method(tmp_path: Path) -> None:
    path = tmp_path / "prompts_naive.json"
    path.write_text(json.dumps(PAPER_LAYOUT))
    react = load_prompts(path, ["react"])
    assert react.episode_key == "webthink_simple6" and len(react.episodes) == 2
    first = react.episodes[0]
    assert first.question == "Which river is longer, the Loire or the Seine?"
    assert [s.action for s in first.steps] == [
        "Search[Loire]",
        "Search[Seine]",
        "Finish[the Loire]",
    ]
    assert first.steps[1].observation == "The Seine is a 777 km long river in northern France."
    assert first.steps[2].observation == ""
    act = load_prompts(path, ["act"])
    assert act.episode_key == "webact_simple6" and act.episodes[0].steps[0].thought == ""
    cot = load_prompts(path, ["cot", "react"])
    assert cot.qa_key == "cotqa_simple6" and cot.qa[0].answer == "Stanisław Lem"
    assert cot.summary() == {
        "prompts_file": str(path),
        "prompts_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "prompts_exemplars": {"webthink_simple6": 2, "cotqa_simple6": 1},
    }
    assert (
        load_prompts(path, ["standard"]).qa_key == "cotqa_simple6"
    )  # no webqa key: questions and answers of cotqa
    # A key named by the user replaces the method's default key.
    named = load_prompts(path, ["act"], ["webthink_simple6"])
    assert named.episode_key == "webthink_simple6"
    messages = build_messages("Where is Lyon?", [], "react", react.episodes)
    text = "\n".join(str(m.content) for m in messages)
    assert "Action 1: Search[Loire]" in text and "Observation 2: «The Seine is a 777 km" in text
    assert "Danube" not in text  # wikireact's own exemplars are replaced


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not UTF-8 JSON"),
        ('["a list"]', "JSON object of prompt texts"),
        (
            '{"webthink_simple6": "Question: q\\nThought 1: t\\nAction 1: Dance[x]\\n"}',
            "no usable exemplar",
        ),
        (
            '{"webthink_simple6": "Question: q\\nThought 1: t\\nAction 1: Search[x]\\nObservation 1: o\\n"}',
            "no usable exemplar",
        ),  # never finishes
        ('{"other": "Question: q\\nAnswer: a"}', "no webthink_simple6 key"),
        ('{"webthink_simple6": ""}', "no usable exemplar"),
    ],
)
def test_broken_prompt_files_are_refused_in_one_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(PromptFileError, match=message) as raised:
        load_prompts(path, ["react"])
    assert "\n" not in str(raised.value)
    with pytest.raises(PromptFileError, match="no key 'missing'"):
        load_prompts(DEFAULT_PROMPTS, ["react"], ["missing"])


def test_shipped_exemplars_keep_the_prompt_text() -> None:
    """The shipped prompt file renders exactly the few-shot turns wikireact always used."""
    turns = {
        "react": build_messages("Q?", [], "react")[1:],
        "act": build_messages("Q?", [], "act")[1:],
        "standard": standard_messages("Q?")[1:],
        "cot": cot_messages("Q?")[1:],
    }
    digest = hashlib.sha256(
        json.dumps(
            {k: [[m.type, m.content] for m in v] for k, v in turns.items()}, ensure_ascii=False
        ).encode()
    ).hexdigest()
    assert digest == "ca73352ebbec4fabb0dc6c9f2c855f00c3d00094cd817110f545a3c01a7a68e6"
    data = json.loads(DEFAULT_PROMPTS.read_text())
    assert set(data) == {
        "webthink_simple6",
        "webact_simple6",
        "cotqa_simple6",
        "webqa_simple6",
        "planexecute_plan_simple3",
        "planexecute_replan_simple3",
    }
    assert len(parse_episodes(data["webthink_simple6"])) == 3


def test_eval_with_a_prompt_file_records_it(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    path = tmp_path / "prompts_naive.json"
    path.write_text(json.dumps(PAPER_LAYOUT))
    spy = SpyModel(outputs=EVAL_SCRIPT)
    report = snapshot_eval(dataset, snapshot, tmp_path / "o", spy, prompts=str(path))
    assert all("Search[Loire]" in p and "Danube" not in p for p in spy.prompts)
    settings = report["settings"]
    assert settings["prompts_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert settings["prompts_exemplars"] == {"webthink_simple6": 2}
    script = tmp_path / "s.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    broken = tmp_path / "broken.json"
    broken.write_text('{"webthink_simple6": "no questions here"}')
    result = CliRunner().invoke(
        app,
        [
            *eval_args(dataset, snapshot, script, tmp_path / "cli"),
            "--prompts",
            str(broken),
        ],
    )
    assert result.exit_code == 2 and "no usable exemplar" in " ".join(result.stderr.split())


def test_per_question_scripts(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    answers = {"q1": "yes", "q2": "Poughkeepsie, New York", "q3": "Los Angeles"}
    scripts: dict[str, list[str]] = {
        qid: [
            "Thought 1: look.\nAction 1: Search[Ed Wood]",
            f"Thought 2: done.\nAction 2: Finish[{answer}]",
        ]
        for qid, answer in answers.items()
    }
    scripts[EVAL_DATA[3]["question"]] = ["Action 1: Finish[no]"]  # by question text
    answers[EVAL_DATA[3]["question"]] = "no"
    script = tmp_path / "per-question.json"
    script.write_text(json.dumps(scripts))
    for method in ("react", "cot"):
        if method == "cot":  # the other form: {"outputs": {...}, "delay_s": ...}
            chains = {
                key: [f"Thought: x. So the answer is {answer}."] for key, answer in answers.items()
            }
            script.write_text(json.dumps({"outputs": chains, "delay_s": 0}))
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
                str(tmp_path / method),
            ],
        )
        assert result.exit_code == 0, result.output
        report = json.loads((tmp_path / method / "report.json").read_text())
        assert report["metrics"]["mean"]["em"] == 1.0, method
    records = [
        json.loads(line)
        for line in (tmp_path / "react" / "trajectories.jsonl").read_text().splitlines()
    ]
    assert {r["id"]: r["steps"] for r in records} == {"q1": 2, "q2": 2, "q3": 2, "q4": 1}
    script.write_text(json.dumps({"q1": ["Action 1: Finish[yes]"]}))
    missing = CliRunner().invoke(
        app,
        [
            *eval_args(dataset, snapshot, script, tmp_path / "missing"),
            "--concurrency",
            "1",
        ],
    )
    assert missing.exit_code == 1 and "no outputs for question" in " ".join(missing.stderr.split())


def test_progress_lines_when_output_is_piped(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"outputs": EVAL_SCRIPT, "delay_s": 0.01}))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[2] / "src"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "wikireact",
            *eval_args(dataset, snapshot, script, tmp_path / "o"),
            "--concurrency",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("progress react:")]
    assert lines[0].startswith("progress react: 0/4 (0%)")
    assert any(line.startswith("progress react: 2/4 (50%), EM ") for line in lines)
    assert lines[-1].startswith("progress react: 4/4 (100%), EM 25.0%") and "ETA 0m00s" in lines[-1]
    assert "\x1b[" not in done.stderr  # plain text, no terminal control


def test_progress_heartbeat_and_terminal_bar() -> None:
    import io
    import time

    from rich.console import Console

    from wikireact.cli.eval_progress import EvalProgress

    piped = io.StringIO()
    with EvalProgress("react", Console(file=piped, width=200), interval_s=0.05) as progress:
        progress.start(500, 0)
        time.sleep(0.3)  # no question finishes: still a line every interval
        progress.record({"em": 1.0})
    lines = piped.getvalue().splitlines()
    assert len([line for line in lines if line.startswith("progress react: 0/500")]) >= 3
    assert lines[-1].startswith("progress react: 1/500 (0%), EM 100.0%")
    terminal = io.StringIO()
    with EvalProgress("react", Console(file=terminal, force_terminal=True, width=200)) as progress:
        progress.start(4, 1)
        progress.record({"em": 0.0})
        progress.record({"em": 1.0})
        progress._bar.refresh()  # type: ignore[union-attr]
        shown = terminal.getvalue()
    assert "3/4" in shown and "EM 50.0%" in shown and "q/s" in shown and "ETA" in shown
    assert "progress react:" not in shown
