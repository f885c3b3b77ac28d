"""`wikireact studio` serves the installed graph with `langgraph dev`, without a langgraph.json."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

pytest.importorskip("langgraph_api")
pytestmark = [pytest.mark.served, pytest.mark.slow]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_studio_serves_the_graph_as_agent_from_any_directory(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "WIKIREACT_DATA_DIR": str(tmp_path / "data")}
    env.pop("GROQ_API_KEY", None)
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "wikireact", "studio", "--port", str(port)],
        cwd=tmp_path,  # no langgraph.json here
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if requests.get(f"{url}/ok", timeout=1).ok:
                    break
            except requests.RequestException:
                time.sleep(0.3)
        else:
            pytest.fail("wikireact studio did not start:\n" + (tmp_path / "server.log").read_text())
        assistants = requests.post(f"{url}/assistants/search", json={}, timeout=10).json()
        assert [a["graph_id"] for a in assistants] == ["agent"]
        assert [a["name"] for a in assistants] == ["wikireact"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
