"""Documents that list what the code has stay equal to it: `.env.example`'s variables, the
served graphs of the docs' Studio section and the fields of their demo transcript."""

from __future__ import annotations

import re
from pathlib import Path

from support import GOOD_RUN, ask_args
from typer.testing import CliRunner

from wikireact.agents import AGENTS, served_id
from wikireact.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
STUDIO_PAGE = (ROOT / "docs" / "studio.md").read_text(encoding="utf-8")
"""The page holding the README's old `## LangGraph Studio` section (issue 39)."""
OFFLINE_PAGE = (ROOT / "docs" / "offline.md").read_text(encoding="utf-8")
"""The page holding the README's old `$ make demo` transcript."""
ENV_READ = re.compile(
    r"""(?:environ\.get|getenv|environ\[|_env|_env_int|env_flag)\(?\s*["']([A-Z][A-Z0-9_]+)["']"""
)
"""A variable read from the environment by name (os.environ, getenv, Context's readers)."""
OWN_NAME = re.compile(r"""["']((?:WIKIREACT|LANGGRAPH)_[A-Z0-9_]+)["']""")
"""wikireact's own variables, and LangGraph's that it sets, wherever the code names them."""


def variables_in_code() -> set[str]:
    """Return every environment variable the code under src/ reads or sets by name."""
    names: set[str] = set()
    for path in (ROOT / "src").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        names |= set(ENV_READ.findall(text)) | set(OWN_NAME.findall(text))
    return names


def variables_in_env_example() -> set[str]:
    """Return the variables `.env.example` lists (its `NAME=value` lines)."""
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))


def test_env_example_lists_every_variable_the_code_reads() -> None:
    in_code, listed = variables_in_code(), variables_in_env_example()
    assert {"WIKIREACT_MODEL", "GROQ_API_KEY", "WIKIREACT_TASK"} <= in_code  # the scan works
    assert in_code - listed == set(), "add these to .env.example"
    assert listed - in_code == set(), "the code no longer reads these: drop them"


def test_the_studio_section_names_every_served_graph() -> None:
    section = STUDIO_PAGE[STUDIO_PAGE.index("\n## LangGraph Studio") + 1 :]
    section = section.split("\n## ", 1)[0]  # up to the next section, if there is one
    missing = [served_id(a) for a in AGENTS if f"`{served_id(a)}`" not in section]
    assert missing == []


def test_the_demo_transcript_shows_the_fields_the_cli_prints(
    tmp_path: Path, snapshot_db: Path
) -> None:
    result = CliRunner().invoke(app, ask_args(snapshot_db, tmp_path, GOOD_RUN))
    assert result.exit_code == 0, result.output
    printed = next(line for line in result.stdout.splitlines() if line.startswith("Status:"))
    demo = OFFLINE_PAGE[OFFLINE_PAGE.index("$ make demo") :]
    shown = next(line for line in demo.splitlines() if line.startswith("Status:"))
    assert labels(shown) == labels(printed)


def labels(status_line: str) -> list[str]:
    """Return the field names of a `Status: ...  steps: 2  model calls: 2 ...` line."""
    return [field.partition(":")[0] for field in status_line.split("  ")]
