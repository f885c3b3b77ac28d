"""`wikireact`: ask questions, resume and inspect episodes, build snapshots.

Every error a user can cause or meet (no key, bad question, unreadable snapshot,
unknown thread, model down, Ctrl-C) ends in one clear message and a non-zero exit
code, never a traceback (set WIKIREACT_DEBUG=1 to see one).
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from rich.console import Console

from wikireact.cli.display import result_json, show_result, show_step
from wikireact.context import Context, validate_question
from wikireact.errors import EpisodeStoppedError, WikiOutageError
from wikireact.graph import build_graph
from wikireact.models import MissingApiKeyError, ModelConfigurationError, load_chat_model
from wikireact.threads import ThreadStore, ThreadStoreError, default_db_path
from wikireact.wiki.factory import WikiConfigurationError, open_source
from wikireact.wiki.snapshot import SnapshotError

app = typer.Typer(
    help="ReAct (Reason + Act) over Wikipedia as a checkpointed LangGraph state machine.",
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    add_completion=False,
)
snapshot_app = typer.Typer(help="Build offline Wikipedia snapshots.", no_args_is_help=True)
app.add_typer(snapshot_app, name="snapshot")

console = Console()
errors = Console(stderr=True)

ModelOpt = Annotated[str | None, typer.Option("--model", help="provider:model, local, or scripted:FILE.json [env WIKIREACT_MODEL; default groq:qwen/qwen3.6-27b]")]
WikiOpt = Annotated[str | None, typer.Option("--wiki", help="live, offline, record:PATH.db or a snapshot PATH.db")]
StepsOpt = Annotated[int | None, typer.Option("--max-steps", help="step budget (default 7)")]
DbOpt = Annotated[Path | None, typer.Option("--db", help="SQLite checkpoint file [default: per-user data dir]")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object instead of the live view")]
OfflineOpt = Annotated[bool, typer.Option("--offline", help="= --wiki offline --model local: no network at all")]
ApproveOpt = Annotated[bool | None, typer.Option("--approve/--no-approve", help="pause before every action: y/n/edit")]


def thread_config(thread_id: str) -> RunnableConfig:
    """Return the LangGraph config that selects a thread."""
    return {"configurable": {"thread_id": thread_id}}


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `message` to stderr and exit with `code`."""
    errors.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def _settings(base: dict[str, Any], **overrides: Any) -> Context:
    values = {**base, **{k: v for k, v in overrides.items() if v is not None}}
    try:
        return Context(**values)
    except (TypeError, ValueError) as exc:
        fail(str(exc))


def _check_resources(context: Context) -> None:
    """Open the model and the wiki up front, so a bad setting fails before any step."""
    try:
        load_chat_model(context.model)
        open_source(context.wiki)
    except MissingApiKeyError as exc:
        errors.print(str(exc), highlight=False)
        raise typer.Exit(2) from None
    except (ModelConfigurationError, WikiConfigurationError, SnapshotError) as exc:
        fail(str(exc))


def _ask_decision(proposal: dict[str, Any]) -> Any:
    """Ask the terminal user to approve, edit or reject a proposed action."""
    console.print(f"[bold yellow]Proposed:[/] {proposal['proposed_action']}")
    answer = typer.prompt("Run it? [y]es / [n]o / [e]dit", default="y").strip().lower()
    if answer.startswith("e"):
        return {"action": typer.prompt("New action (e.g. Search[Ed Wood])")}
    if answer.startswith("n"):
        return {"reject": typer.prompt("Why (shown to the model)", default="not approved")}
    return True


def _drive(store: ThreadStore, payload: Any, thread_id: str, context: Context, quiet: bool) -> dict[str, Any]:
    """Run the episode to its end (or pause), showing steps live and asking for approvals."""
    graph = build_graph(store.saver)
    config = thread_config(thread_id)
    while True:
        with console.status("[cyan]Thinking…", spinner="dots") if not quiet else nullcontext():
            for mode, chunk in graph.stream(
                payload, config, context=context, stream_mode=["updates", "custom"], durability="sync"
            ):
                if mode == "custom" and not quiet and isinstance(chunk, dict):
                    show_step(console, chunk)
        state = graph.get_state(config)
        if state.interrupts:
            payload = Command(resume=_ask_decision(state.interrupts[0].value))
            continue
        return dict(state.values)


def _run(store: ThreadStore, payload: Any, thread_id: str, context: Context, as_json: bool) -> None:
    try:
        result = _drive(store, payload, thread_id, context, quiet=as_json)
    except KeyboardInterrupt:
        fail(f"interrupted; the episode is saved: continue it with `wikireact resume {thread_id}`", 130)
    except EpisodeStoppedError as exc:
        alternative = " (or with --wiki offline)" if isinstance(exc, WikiOutageError) else ""
        fail(f"{str(exc).rstrip('.')}. The episode is saved: continue it later with "
             f"`wikireact resume {thread_id}`{alternative}", 1)
    if as_json:
        print(result_json(result, thread_id))
    else:
        show_result(console, result, thread_id)


def _guard(command: Callable[..., None]) -> Callable[..., None]:
    """Turn unexpected exceptions into one line (tracebacks only with WIKIREACT_DEBUG=1)."""
    import functools

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except (ThreadStoreError, SnapshotError, WikiConfigurationError, ModelConfigurationError) as exc:
            fail(str(exc))
        except Exception as exc:
            if os.environ.get("WIKIREACT_DEBUG"):
                raise
            fail(f"unexpected {type(exc).__name__}: {exc} (set WIKIREACT_DEBUG=1 for details)", 1)

    return wrapper


@app.command()
@_guard
def ask(
    question: Annotated[str, typer.Argument(help="The question (at most 2,000 characters).")],
    model: ModelOpt = None,
    wiki: WikiOpt = None,
    max_steps: StepsOpt = None,
    thread_id: Annotated[str | None, typer.Option("--thread-id", help="name the episode's thread")] = None,
    db: DbOpt = None,
    approve: ApproveOpt = None,
    offline: OfflineOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Answer QUESTION, showing each Thought, Action and Observation."""
    try:
        question = validate_question(question)
    except ValueError as exc:
        fail(str(exc))
    if offline:
        model, wiki = model or "local", wiki or "offline"
    context = _settings({}, model=model, wiki=wiki, max_steps=max_steps, approve=approve)
    _check_resources(context)
    store = ThreadStore(db or default_db_path())
    thread_id = thread_id or uuid.uuid4().hex[:12]
    store.register(thread_id, question, context)
    _run(store, {"question": question}, thread_id, context, as_json)


@app.command()
@_guard
def resume(
    thread_id: Annotated[str, typer.Argument(help="The thread to continue.")],
    model: ModelOpt = None,
    wiki: WikiOpt = None,
    max_steps: StepsOpt = None,
    db: DbOpt = None,
    approve: ApproveOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Continue a paused or interrupted episode with the settings it started with."""
    store = ThreadStore(db or default_db_path())
    context = _settings(store.settings(thread_id), model=model, wiki=wiki, max_steps=max_steps, approve=approve)
    _check_resources(context)
    state = build_graph(store.saver).get_state(thread_config(thread_id))
    payload: Any = None
    if not state.values:  # interrupted before the first checkpoint: start it again
        payload = {"question": store.question(thread_id)}
    elif state.interrupts:
        payload = Command(resume=_ask_decision(state.interrupts[0].value))
    _run(store, payload, thread_id, context, as_json)


@app.command()
@_guard
def history(
    thread_id: Annotated[str, typer.Argument(help="The thread to list.")],
    db: DbOpt = None,
) -> None:
    """List a thread's checkpoints (newest first) and its steps."""
    store = ThreadStore(db or default_db_path())
    store.settings(thread_id)  # unknown thread -> clear error
    graph = build_graph(store.saver)
    config = thread_config(thread_id)
    for snap in graph.get_state_history(config):
        values = snap.values
        console.print(
            f"{snap.config['configurable']['checkpoint_id']}  superstep {snap.metadata.get('step') if snap.metadata else '?':>3}  "
            f"steps {values.get('steps', 0):>2}  next {','.join(snap.next) or '-':<8}  "
            f"status {values.get('status', '-')}",
            highlight=False,
        )
    final = graph.get_state(config).values
    console.print()
    for n, step in enumerate(final.get("trajectory", []), start=1):
        show_step(console, {"step": n, **step})


@app.command("graph")
def graph_command() -> None:
    """Print the graph as a Mermaid diagram."""
    print(build_graph().get_graph().draw_mermaid())


@snapshot_app.command("import")
@_guard
def snapshot_import(
    files: Annotated[list[Path], typer.Argument(help="HotpotQA-format .json or {title,text} .jsonl files")],
    out: Annotated[Path, typer.Option("--out", help="the snapshot file to create or extend")],
) -> None:
    """Import pages into a snapshot (streaming; idempotent)."""
    from wikireact.wiki.importer import import_file
    from wikireact.wiki.snapshot import SnapshotStore

    store = SnapshotStore.create(out)
    for path in files:
        stats = import_file(path, store)
        console.print(
            f"{path}: {stats.read} pages read, {stats.added} added, {stats.changed} updated, "
            f"{stats.unchanged} unchanged"
        )
    console.print(f"{out}: {store.count()} pages, snapshot id {store.meta('snapshot_id')}")


from wikireact.cli.eval_command import eval_command  # noqa: E402

app.command("eval")(_guard(eval_command))


def main() -> None:
    """Entry point of the `wikireact` command."""
    try:
        app()
    except KeyboardInterrupt:
        errors.print("interrupted")
        sys.exit(130)
