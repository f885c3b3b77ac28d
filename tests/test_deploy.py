"""The deployable server: `langgraph dockerfile` builds a Dockerfile from our langgraph.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def langgraph_cli() -> str:
    found = Path(sys.executable).with_name("langgraph")
    if found.exists():
        return str(found)
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("CI=true and the langgraph CLI (extra `studio`) is not installed")
    pytest.skip("the langgraph CLI (pip install 'wikireact[studio]') is not installed")


def test_langgraph_dockerfile_builds_from_our_config(tmp_path: Path) -> None:
    out = tmp_path / "Dockerfile"
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true"}
    done = subprocess.run(
        [langgraph_cli(), "dockerfile", "-c", str(ROOT / "langgraph.json"), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    text = out.read_text()
    assert text.startswith("FROM langchain/langgraph-api:3.11")
    graphs = json.loads(
        next(line for line in text.splitlines() if line.startswith("ENV LANGSERVE_GRAPHS="))
        .split("=", 1)[1]
        .strip("'")
    )
    assert set(graphs) == {"agent"} and graphs["agent"].endswith("/src/wikireact/graph.py:graph")
    assert f"ADD . /deps/{ROOT.name}" in text and "uv pip install" in text
    # the served module really exports a checkpointer-less graph under that name
    from wikireact.graph import graph

    assert graph.checkpointer is None  # the server refuses a graph with its own checkpointer
