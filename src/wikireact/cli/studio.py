"""`wikireact studio`: serve the installed graph to LangGraph Studio and the SDK (`langgraph dev`).

For a `pip install`ed wikireact, which has no `langgraph.json`: it writes one that serves
every agent's graph (`wikireact.agents.served_graphs`: ReAct as `agent`, ReWOO as `rewoo`,
...; with `./.env` when there is one) and runs `langgraph dev` on it, offline (no
analytics, no version check). Without the studio extra it is
refused in one line naming it.

The server reads its stored checkpoints as data (`SERVED_CHECKPOINTS`, `STRICT_DECODING`):
LangGraph's safe types only, no pickle, whatever the environment says.

`langgraph dev` runs as a child process in its own process group. SIGINT, SIGTERM and
SIGHUP sent to `wikireact studio` (Ctrl-C, a service manager, a closed terminal) are passed
on to it, and `wikireact studio` ends when it has. The server keeps its threads, queued runs
and store in `.langgraph_api` of the directory it runs in: `--state-dir` (default: the
current directory). On restart it runs the runs left unfinished there first; `--fresh`
deletes that folder before it starts. `--n-jobs-per-worker` is how many runs execute at once
(1 by default, as `langgraph dev`'s own default: more runs queue behind a long one).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from wikireact._extras import require
from wikireact.agents import served_graphs
from wikireact.cli.common import console, fail
from wikireact.errors import MissingExtraError, cli_message

SERVED_CHECKPOINTS = {"serde": {"pickle_fallback": False}}
"""langgraph.json's `checkpointer`: the server never unpickles a stored value."""
STRICT_DECODING = {"LANGGRAPH_STRICT_MSGPACK": "true"}
"""The server decodes only LangGraph's safe types (and the graphs' own) from checkpoints."""

STATE_FOLDER = ".langgraph_api"
"""Where `langgraph dev` keeps its state, in the directory it runs in (a name it fixes)."""
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals passed on to the server: each asks it to shut down."""


def studio_command(
    port: Annotated[int, typer.Option(metavar="PORT", help="port of the API")] = 2024,
    host: Annotated[str, typer.Option(metavar="HOST", help="address to listen on")] = "127.0.0.1",
    browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="open Studio's page (on LangSmith)")
    ] = False,
    state_dir: Annotated[
        Path,
        typer.Option(
            metavar="DIR",
            help=f"run the server in DIR: it keeps threads and runs in DIR/{STATE_FOLDER} "
            "(relative paths in settings are read from DIR)",
        ),
    ] = Path("."),
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh",
            help=f"delete DIR/{STATE_FOLDER} first: no old thread, no unfinished run re-run",
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option("--n-jobs-per-worker", min=1, metavar="N", help="runs that execute at once"),
    ] = 1,
) -> None:
    """Serve every agent's graph (ReAct as `agent`) with `langgraph dev` (Studio's API), until Ctrl-C or SIGTERM."""
    try:
        require("studio", "LangGraph Studio (langgraph dev) needs")
    except MissingExtraError as exc:
        fail(cli_message(exc))
    state = state_dir.expanduser().resolve() / STATE_FOLDER
    if not state.parent.is_dir():
        fail(f"--state-dir {state_dir} is not a directory")
    if fresh and state.exists():
        try:
            shutil.rmtree(state)
        except OSError as exc:
            fail(f"cannot delete {state} (--fresh): {exc.strerror or exc}")
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
        argv += ["--n-jobs-per-worker", str(jobs)]
        argv += [] if browser else ["--no-browser"]
        env = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true"}
        console.print(
            f"wikireact studio: state in {state} (start clean with --fresh); "
            f"{jobs} run{'s' if jobs > 1 else ''} at a time (--n-jobs-per-worker); "
            "stop with Ctrl-C or SIGTERM",
            soft_wrap=True,
            highlight=False,
        )
        code = serve(argv, {**env, **os.environ, **STRICT_DECODING}, state.parent)
    if code:
        raise typer.Exit(code)


def serve(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    """Run the server `argv` until it ends, passing on `FORWARDED` signals; return its exit code.

    A server that ends because of a signal it was passed ended as asked: code 0.
    It runs in its own process group, so a Ctrl-C in the terminal reaches it once, from here.
    """
    server = subprocess.Popen(argv, env=env, cwd=cwd, start_new_session=True)
    passed: list[int] = []

    def pass_on(signum: int, frame: FrameType | None) -> None:
        passed.append(signum)
        server.send_signal(signum)

    previous = {signum: signal.signal(signum, pass_on) for signum in FORWARDED}
    try:
        code = server.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if server.poll() is None:  # e.g. an exception in this process: leave no server behind
            server.terminate()
            server.wait()
    if passed and code in (0, *(-s for s in passed)):
        return 0
    return 128 - code if code < 0 else code  # killed by a signal: the shell's convention
