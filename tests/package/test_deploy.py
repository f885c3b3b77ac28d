"""The deployable server: `langgraph dockerfile` builds a Dockerfile from our langgraph.json.

The image serves the graph with no extras; `--build-arg WIKIREACT_EXTRAS=offline,postgres`
adds them (deploy/install_extras.sh, run by the Dockerfile before wikireact is installed).
Docker itself is not available here: the tests read the Dockerfile and run the script with
stand-ins for uv and apt-get.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wikireact.agents import AGENTS, load_agent, served_id

ROOT = Path(__file__).resolve().parents[2]


def langgraph_cli() -> str:
    found = Path(sys.executable).with_name("langgraph")
    if found.exists():
        return str(found)
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("CI=true and the langgraph CLI (extra `studio`) is not installed")
    pytest.skip("the langgraph CLI (pip install 'wikireact[studio]') is not installed")


def dockerfile(tmp_path: Path) -> str:
    """Return the Dockerfile `langgraph dockerfile` generates from our langgraph.json."""
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
    return out.read_text()


def test_langgraph_dockerfile_builds_from_our_config(tmp_path: Path) -> None:
    text = dockerfile(tmp_path)
    assert text.startswith("FROM langchain/langgraph-api:3.11")
    graphs = json.loads(
        next(line for line in text.splitlines() if line.startswith("ENV LANGSERVE_GRAPHS="))
        .split("=", 1)[1]
        .strip("'")
    )
    assert set(graphs) == {served_id(name) for name in AGENTS}
    assert graphs["agent"].endswith("/src/wikireact/graph.py:graph")
    assert graphs["rewoo"].endswith("/src/wikireact/agents/rewoo/graph.py:graph")
    assert f"ADD . /deps/{ROOT.name}" in text and "uv pip install" in text
    # stored checkpoints are data: LangGraph's safe types only, never a pickle (issue 34 item 1)
    assert "ENV LANGGRAPH_STRICT_MSGPACK=true" in text.splitlines()
    assert """ENV LANGGRAPH_CHECKPOINTER='{"serde": {"pickle_fallback": false}}'""" in text
    # the served module really exports a checkpointer-less graph under that name
    for name in AGENTS:  # the server refuses a graph with its own checkpointer
        assert load_agent(name).graph.checkpointer is None, name


def test_langgraph_json_serves_one_graph_per_agent() -> None:
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    expected = {
        served_id(name): "./src/" + module.replace(".", "/") + ".py:graph"
        for name, module in AGENTS.items()
    }
    assert graphs == expected


def test_the_image_installs_the_extras_named_at_build_time_before_wikireact(
    tmp_path: Path,
) -> None:
    lines = dockerfile(tmp_path).splitlines()
    assert "ARG WIKIREACT_EXTRAS=" in lines  # none unless --build-arg WIKIREACT_EXTRAS=...
    run = next(i for i, line in enumerate(lines) if "install_extras.sh" in line and "RUN" in line)
    assert '"$WIKIREACT_EXTRAS" /tmp/wikireact' in lines[run]
    copies = [line for line in lines[:run] if line.startswith("COPY")]
    assert any("deploy/install_extras.sh" in c and "pyproject.toml" in c for c in copies)
    assert "COPY src /tmp/wikireact/src" in copies
    # before the image installs the package itself (which keeps what is installed)
    assert run < lines.index("# -- Installing all local dependencies --")


def run_install_script(tmp_path: Path, extras: str) -> list[str]:
    """Run deploy/install_extras.sh with stand-ins for uv and apt-get; return their calls."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir(parents=True, exist_ok=True)
    calls = tmp_path / "calls.txt"
    for tool in ("uv", "apt-get"):
        script = fake_bin / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $* CMAKE_ARGS=$CMAKE_ARGS" >> {calls}\n')
        script.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake_bin}:{os.environ['PATH']}"}
    env.pop("CMAKE_ARGS", None)
    done = subprocess.run(
        ["sh", str(ROOT / "deploy" / "install_extras.sh"), extras, "/tmp/wikireact"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return calls.read_text().splitlines() if calls.exists() else []


def test_the_install_script_installs_exactly_the_extras_asked_for(tmp_path: Path) -> None:
    assert run_install_script(tmp_path / "none", "") == []  # the default image: no extras
    postgres = run_install_script(tmp_path / "pg", "postgres")
    assert postgres == [
        "uv pip install --system --no-cache-dir -c /api/constraints.txt "
        "/tmp/wikireact[postgres] CMAKE_ARGS="
    ]
    offline = run_install_script(tmp_path / "offline", "offline,postgres")
    assert [c.split()[:2] for c in offline] == [["apt-get", "update"], ["apt-get", "install"]] + [
        ["uv", "pip"]
    ]
    assert "/tmp/wikireact[offline,postgres]" in offline[-1]
    makefile = (ROOT / "Makefile").read_text()
    cmake_args = re.search(r"CMAKE_ARGS \?= (.+)", makefile)
    assert cmake_args and offline[-1].endswith(f"CMAKE_ARGS={cmake_args.group(1).strip()}")
