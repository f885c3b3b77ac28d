"""`wikireact studio`: serve the installed graph to LangGraph Studio and the SDK (`langgraph dev`).

For a `pip install`ed wikireact, which has no `langgraph.json`: it writes one that serves
every agent's graph (`wikireact.agents.served_graphs`: ReAct as `agent`, ReWOO as `rewoo`,
...; with `./.env` when there is one) and runs `langgraph dev` on it, offline (no
analytics, no version check). Without the studio extra it is
refused in one line naming it.

The server reads its stored checkpoints as data (`SERVED_CHECKPOINTS`, `STRICT_DECODING`):
LangGraph's safe types only, no pickle, whatever the environment says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from wikireact._extras import require
from wikireact.agents import served_graphs
from wikireact.cli.common import fail
from wikireact.errors import MissingExtraError, cli_message

SERVED_CHECKPOINTS = {"serde": {"pickle_fallback": False}}
"""langgraph.json's `checkpointer`: the server never unpickles a stored value."""
STRICT_DECODING = {"LANGGRAPH_STRICT_MSGPACK": "true"}
"""The server decodes only LangGraph's safe types (and the graphs' own) from checkpoints."""


def studio_command(
    port: Annotated[int, typer.Option(metavar="PORT", help="port of the API")] = 2024,
    host: Annotated[str, typer.Option(metavar="HOST", help="address to listen on")] = "127.0.0.1",
    browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="open Studio's page (on LangSmith)")
    ] = False,
) -> None:
    """Serve every agent's graph (ReAct as `agent`) with `langgraph dev` (Studio's API), until Ctrl-C."""
    try:
        require("studio", "LangGraph Studio (langgraph dev) needs")
    except MissingExtraError as exc:
        fail(cli_message(exc))
    env_file = Path(".env")
    with tempfile.TemporaryDirectory(prefix="wikireact-studio-") as folder:
        config = Path(folder) / "langgraph.json"
        settings: dict[str, object] = {
            "dependencies": ["."],
            "graphs": served_graphs(),
            "checkpointer": SERVED_CHECKPOINTS,
        }
        if env_file.is_file():
            settings["env"] = str(env_file.resolve())
        config.write_text(json.dumps(settings), encoding="utf-8")
        argv = [sys.executable, "-m", "langgraph_cli", "dev", "--config", str(config)]
        argv += ["--host", host, "--port", str(port), "--no-reload"]
        argv += [] if browser else ["--no-browser"]
        env = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true"}
        try:
            code = subprocess.run(argv, env={**env, **os.environ, **STRICT_DECODING}).returncode
        except KeyboardInterrupt:
            code = 0
    if code:
        raise typer.Exit(code)
