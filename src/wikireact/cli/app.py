"""`wikireact`: ask questions, resume and inspect episodes, build snapshots.

Every error a user can cause or meet (no key, bad question, unreadable snapshot,
unknown thread, model down, Ctrl-C) ends in one clear message and a non-zero exit
code, never a traceback (set WIKIREACT_DEBUG=1 to see one).
"""

from __future__ import annotations

import importlib.metadata
import sys
import uuid
from collections.abc import Callable
from contextlib import closing, nullcontext
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from rich.text import Text

from wikireact.audit import history_json, signed
from wikireact.cli.approval import GATED, ApprovalPrompt
from wikireact.cli.display import (
    CliConsole,
    clean,
    result_json,
    show_result,
    show_step,
    show_transcript,
)
from wikireact.cli.help import EvalGroup, HelpCommand
from wikireact.cli.hints import resume_command
from wikireact.context import Context, env_flag, validate_question
from wikireact.errors import EpisodeStoppedError, WikiOutageError, WikireactError
from wikireact.graph import build_graph
from wikireact.history import list_checkpoints
from wikireact.model_cache import CachedChatModel
from wikireact.models import (
    MissingApiKeyError,
    ModelConfigurationError,
    absolute_model_spec,
    load_chat_model,
)
from wikireact.state import episode_ended
from wikireact.threads import (
    STORE_ERRORS,
    Store,
    ThreadStoreError,
    default_db_path,
    is_postgres_url,
    open_store,
    runner,
)
from wikireact.tool_prompts import bind_protocol_tools
from wikireact.wiki.factory import WikiConfigurationError, absolute_wiki_spec, open_source
from wikireact.wiki.snapshot import SnapshotError, SnapshotSource

# Plain Click help (rich_markup_mode=None): option text is shown as written, never read as markup.
CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "show_default": True}
app = typer.Typer(
    name="wikireact",
    help="ReAct (Reason + Act) over Wikipedia as a checkpointed LangGraph state machine.",
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
)
snapshot_app = typer.Typer(
    help="Build offline Wikipedia snapshots.", no_args_is_help=True, rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
)
app.add_typer(snapshot_app, name="snapshot")

console = CliConsole()
errors = CliConsole(stderr=True)

ModelOpt = Annotated[str | None, typer.Option(
    "--model", metavar="MODEL", show_default="env WIKIREACT_MODEL, else groq:qwen/qwen3.6-27b",
    help="provider:model, local (offline Gemma 3 270M) or scripted:FILE.json")]
WikiOpt = Annotated[str | None, typer.Option(
    "--wiki", metavar="SOURCE", show_default="env WIKIREACT_WIKI, else live",
    help="live, offline, record:PATH.db or a snapshot PATH.db")]
StepsOpt = Annotated[int | None, typer.Option(
    "--max-steps", metavar="N", show_default="env WIKIREACT_MAX_STEPS, else 7", help="step budget")]
DbOpt = Annotated[str | None, typer.Option(
    "--db", metavar="PATH|URL", show_default="threads.db in the per-user data dir (env WIKIREACT_DATA_DIR)",
    help="SQLite checkpoint file, or a postgresql:// URL")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object instead of the live view")]
CacheOpt = Annotated[Path | None, typer.Option(
    "--model-cache", metavar="PATH", show_default="none",
    help="SQLite file that records every model call and replays the ones it holds")]
OfflineOpt = Annotated[bool, typer.Option("--offline", help="= --wiki offline --model local: no network at all")]
ApproveOpt = Annotated[bool | None, typer.Option(
    "--approve/--no-approve", show_default="env WIKIREACT_APPROVE, else off",
    help=f"ask y/n/edit before every action. {GATED}")]
ProtocolOpt = Annotated[str | None, typer.Option(
    "--protocol", metavar="text|tools", show_default="env WIKIREACT_PROTOCOL, else text",
    help="text: Thought/Action lines (any model); tools: native tool calls (models with tool calling)")]
ReviewerOpt = Annotated[str | None, typer.Option(
    "--reviewer", metavar="NAME", help="your name, recorded with every approval decision")]
# `resume` continues with the settings the thread started with unless told otherwise.
SAME = "as the thread started"
ResumeModelOpt = Annotated[str | None, typer.Option(
    "--model", metavar="MODEL", show_default=SAME, help="provider:model, local or scripted:FILE.json")]
ResumeWikiOpt = Annotated[str | None, typer.Option(
    "--wiki", metavar="SOURCE", show_default=SAME, help="live, offline, record:PATH.db or a snapshot PATH.db")]
ResumeStepsOpt = Annotated[int | None, typer.Option(
    "--max-steps", metavar="N", show_default=SAME,
    help="step budget; more than the steps used continues a thread that ran out of budget")]
ResumeApproveOpt = Annotated[bool | None, typer.Option(
    "--approve/--no-approve", show_default=SAME, help=f"ask y/n/edit before every action. {GATED}")]

def _show_version(value: bool) -> None:
    if value:
        try:
            version = importlib.metadata.version("wikireact")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown (not installed)"
        print(f"wikireact {version}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option(
        "--version", callback=_show_version, is_eager=True, help="print the version and exit")] = False,
) -> None:
    """ReAct (Reason + Act) over Wikipedia as a checkpointed LangGraph state machine."""


def thread_config(thread_id: str) -> RunnableConfig:
    """Return the LangGraph config that selects a thread."""
    return {"configurable": {"thread_id": thread_id}}


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `message` to stderr (literally, cleaned of control characters) and exit with `code`."""
    errors.print(Text.assemble(("error:", "bold red"), " ", clean(message)))
    raise typer.Exit(code)


def _settings(base: dict[str, Any], **overrides: Any) -> Context:
    """Return the run's settings, with file paths made absolute (they are stored with the thread)."""
    values = {**base, **{k: v for k, v in overrides.items() if v is not None}}
    try:
        context = Context(**values)
    except (TypeError, ValueError) as exc:
        fail(str(exc))
    context.model, context.wiki = absolute_model_spec(context.model), absolute_wiki_spec(context.wiki)
    return context


def _snapshot_id(wiki: str) -> str | None:
    """Return the id of the snapshot `wiki` names (None for live sources and unnamed snapshots)."""
    source = open_source(wiki)
    return source.snapshot_id if isinstance(source, SnapshotSource) else None


def _check_same_snapshot(store: Store, thread_id: str, context: Context) -> None:
    """Refuse to resume a thread on a snapshot other than the one it started on."""
    started_on = store.snapshot_id(thread_id)
    now = _snapshot_id(context.wiki)
    if started_on is not None and now != started_on:
        fail(
            f"the snapshot {context.wiki} changed since thread {thread_id} started (snapshot id "
            f"{started_on}, now {now}); resuming would mix two wikis: restore it, or pass --wiki "
            "to resume on another snapshot on purpose"
        )


def _check_resources(context: Context, *, model: bool = True) -> None:
    """Open the model (unless `model` is False) and the wiki up front, so a bad setting fails before any step."""
    try:
        if model:
            chat_model = load_chat_model(context.model)
            if context.protocol == "tools":
                bind_protocol_tools(chat_model)
        open_source(context.wiki)
    except MissingApiKeyError as exc:
        errors.print(clean(exc))
        raise typer.Exit(2) from None
    except (ModelConfigurationError, WikiConfigurationError, SnapshotError) as exc:
        fail(str(exc))


def _decide(prompt: ApprovalPrompt, pending: Any) -> Any:
    """Ask the person at the terminal about the action `pending` (a paused state) proposes."""
    values = pending.values
    thought = (values.get("current") or {}).get("thought", "")
    return prompt.decide(pending.interrupts[0].value, values.get("steps", 0) + 1, thought)


def _drive(
    store: Store, payload: Any, thread_id: str, context: Context, quiet: bool,
    start: RunnableConfig | None = None, model: BaseChatModel | None = None, reviewer: str | None = None,
) -> dict[str, Any]:
    """Run the episode to its end, showing steps live and asking for approvals.

    `payload` None continues the thread (asking first if it is paused for approval);
    `start` is a checkpoint's config to continue from instead of the latest one; `model`
    replaces the one `context` names (e.g. wrapped in a model cache).
    """
    graph = build_graph(store.saver, model=model)
    config = thread_config(thread_id)
    run_config = start or config
    prompt = ApprovalPrompt(errors)
    thought_shown: set[int] = set()  # steps whose Thought the approval prompt printed
    while True:
        if payload is None:
            pending = graph.get_state(run_config)
            if pending.interrupts and context.approve:
                thought_shown.add(pending.values.get("steps", 0) + 1)
                payload = Command(resume=signed(_decide(prompt, pending), reviewer))
        with console.status("Thinking…", spinner="dots") if not quiet else nullcontext():
            for mode, chunk in graph.stream(
                payload, run_config, context=context, stream_mode=["updates", "custom"], durability="sync"
            ):
                if mode == "custom" and not quiet and isinstance(chunk, dict):
                    show_step(console, chunk, thought=chunk.get("step") not in thought_shown)
        run_config, payload = config, None
        state = graph.get_state(config)
        if not state.interrupts:
            return dict(state.values)


def _run(
    store: Store, payload: Any, thread_id: str, context: Context, as_json: bool,
    hint: str, start: RunnableConfig | None = None, model: BaseChatModel | None = None,
    reviewer: str | None = None,
) -> None:
    """Drive the episode and print its result; `hint` is the command that resumes it."""
    try:
        result = _drive(store, payload, thread_id, context, quiet=as_json, start=start, model=model,
                        reviewer=reviewer)
    except KeyboardInterrupt:
        fail(f"interrupted; the episode is saved: continue it with `{hint}`", 130)
    except EOFError:
        fail(f"no answer at the approval prompt (end of input); the episode is saved: continue it with `{hint}`", 130)
    except EpisodeStoppedError as exc:
        alternative = " (or with --wiki offline)" if isinstance(exc, WikiOutageError) else ""
        fail(f"{str(exc).rstrip('.')}. The episode is saved: continue it later with `{hint}`{alternative}", 1)
    except STORE_ERRORS as exc:  # e.g. a full disk, or the database server went away
        fail(f"cannot save the episode in {store.location}: {str(exc).strip()}. The steps saved so far are kept: "
             f"once that is fixed, continue with `{hint}`", 1)
    if as_json:
        print(result_json(result, thread_id))
    else:
        show_result(console, result, thread_id)
    if isinstance(model, CachedChatModel):
        errors.print(f"model cache: {model.hits} hits, {model.misses} misses")


def _cached_model(context: Context, cache: Path | None) -> BaseChatModel | None:
    """Return the run's model wrapped in a model cache (`--model-cache`), or None without one."""
    if cache is None:
        return None
    from wikireact.model_cache import SqliteModelCache, model_identity

    try:
        load_chat_model(context.model)
    except MissingApiKeyError:
        pass  # a replay needs no key; a call the cache does not hold fails with this reason
    _check_resources(context, model=False)
    return CachedChatModel(identity=model_identity(context.model), store=SqliteModelCache(cache),
                           load_model=lambda: load_chat_model(context.model))


def _debug() -> bool:
    """Whether WIKIREACT_DEBUG asks for tracebacks (an unreadable value counts as no)."""
    try:
        return env_flag("WIKIREACT_DEBUG")
    except ValueError:
        return False


def _guard(command: Callable[..., None]) -> Callable[..., None]:
    """Turn unexpected exceptions into one line (tracebacks only with WIKIREACT_DEBUG=1)."""
    import functools

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except WikireactError as exc:
            fail(str(exc))
        except Exception as exc:
            if _debug():
                raise
            fail(f"unexpected {type(exc).__name__}: {exc} (set WIKIREACT_DEBUG=1 for details)", 1)

    return wrapper


@app.command(cls=HelpCommand)
@_guard
def ask(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="The question (at most 2,000 characters).", show_default=False)],
    model: ModelOpt = None,
    wiki: WikiOpt = None,
    max_steps: StepsOpt = None,
    thread_id: Annotated[str | None, typer.Option(
        "--thread-id", metavar="ID", show_default="a random id", help="name the episode's thread")] = None,
    db: DbOpt = None,
    approve: ApproveOpt = None,
    offline: OfflineOpt = False,
    model_cache: CacheOpt = None,
    as_json: JsonOpt = False,
    protocol: ProtocolOpt = None,
    reviewer: ReviewerOpt = None,
) -> None:
    """Answer QUESTION, showing each Thought, Action and Observation."""
    try:
        question = validate_question(question)
    except ValueError as exc:
        fail(str(exc))
    if offline:
        model, wiki = model or "local", wiki or "offline"
    context = _settings({}, model=model, wiki=wiki, max_steps=max_steps, approve=approve, protocol=protocol)
    cached = _cached_model(context, model_cache)
    if cached is None:
        _check_resources(context)
    thread_id = thread_id or uuid.uuid4().hex[:12]
    with closing(open_store(db)) as store, runner(store, thread_id):
        if _thread_exists(store, thread_id):
            fail(f"thread {thread_id!r} already exists; continue it with `{resume_command(thread_id, db)}` "
                 "or pick another --thread-id")
        store.register(thread_id, question, context, snapshot_id=_snapshot_id(context.wiki))
        _run(store, {"question": question}, thread_id, context, as_json, resume_command(thread_id, db),
             model=cached, reviewer=reviewer)


def _thread_exists(store: Store, thread_id: str) -> bool:
    """Whether the checkpoint file already holds a thread with this id."""
    try:
        store.question(thread_id)
    except ThreadStoreError:
        return False
    return True


def _existing_store(db: str | None, thread_id: str) -> Store:
    """Open the checkpoint store that holds `thread_id`; never create an empty SQLite file."""
    path = db or default_db_path()
    if not is_postgres_url(db) and not Path(path).exists():
        fail(f"unknown thread id {thread_id!r}: there is no checkpoint file at {path} (wrong --db?)")
    return open_store(db)


def _checkpoint_config(store: Store, thread_id: str, checkpoint_id: str) -> RunnableConfig:
    """Return the config of one of the thread's checkpoints; fail if it has no such checkpoint."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id}}
    if store.saver.get_tuple(config) is None:
        fail(f"thread {thread_id!r} has no checkpoint {checkpoint_id!r} (see `wikireact history {thread_id}`)")
    return config


def _extend_budget(store: Store, thread_id: str, values: dict[str, Any], max_steps: int | None) -> None:
    """Reopen a thread that ran out of budget when `max_steps` allows more steps, or say why not."""
    steps = values.get("steps", 0)
    status = values.get("status")
    if max_steps is None or not episode_ended(values):
        return
    if status != "budget_exhausted":
        fail(f"thread {thread_id!r} has ended ({status}), not run out of budget: "
             "a larger --max-steps cannot continue it")
    if max_steps <= steps:
        fail(f"thread {thread_id!r} has used {steps} steps: --max-steps must be more than {steps} to continue it")
    build_graph(store.saver).update_state(thread_config(thread_id), {"status": "running"}, as_node="observe")


@app.command(cls=HelpCommand, short_help="Recap THREAD, then continue it (same settings unless given).")
@_guard
def resume(
    thread_id: Annotated[str, typer.Argument(metavar="THREAD", help="The thread to continue.", show_default=False)],
    model: ResumeModelOpt = None,
    wiki: ResumeWikiOpt = None,
    max_steps: ResumeStepsOpt = None,
    db: DbOpt = None,
    approve: ResumeApproveOpt = None,
    from_checkpoint: Annotated[str | None, typer.Option(
        "--from", metavar="CHECKPOINT", show_default="the latest",
        help="continue from this checkpoint (see `history`): replays, or forks with new settings")] = None,
    model_cache: CacheOpt = None,
    as_json: JsonOpt = False,
    reviewer: ReviewerOpt = None,
) -> None:
    """Recap THREAD's question and steps, then continue it with the settings it started with."""
    with closing(_existing_store(db, thread_id)) as store:
        question = store.question(thread_id)
        context = _settings(store.settings(thread_id), model=model, wiki=wiki, max_steps=max_steps, approve=approve)
        cached = _cached_model(context, model_cache)
        if cached is None:
            _check_resources(context)
        if wiki is None:
            _check_same_snapshot(store, thread_id, context)
        with runner(store, thread_id):  # one runner per thread, across processes and machines
            start = _checkpoint_config(store, thread_id, from_checkpoint) if from_checkpoint else None
            values = build_graph(store.saver).get_state(start or thread_config(thread_id)).values
            if start is None:
                _extend_budget(store, thread_id, values, max_steps)
            if not as_json:
                console.print(Text.assemble(("Resuming thread ", "bold"), clean(thread_id)))
                show_transcript(console, question, values, status=False)
            payload = None if values else {"question": question}  # no checkpoint yet: start it again
            _run(store, payload, thread_id, context, as_json, resume_command(thread_id, db, max_steps), start,
                 model=cached, reviewer=reviewer)


@app.command(cls=HelpCommand, short_help="Show THREAD as a transcript, then its checkpoints.")
@_guard
def history(
    thread_id: Annotated[str, typer.Argument(metavar="THREAD", help="The thread to show.", show_default=False)],
    db: DbOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the audit trail as one JSON object")] = False,
) -> None:
    """Show THREAD as a transcript (question, status, answer, steps), then its checkpoints."""
    with closing(_existing_store(db, thread_id)) as store:
        question = store.question(thread_id)
        graph = build_graph(store.saver)
        config = thread_config(thread_id)
        if as_json:
            print(history_json(thread_id, question, store.settings(thread_id), dict(graph.get_state(config).values)))
            return
        show_transcript(console, question, graph.get_state(config).values)
        console.print(Text(f"Checkpoints, newest first (continue from one: "
                           f"{resume_command(thread_id, db, checkpoint='CHECKPOINT')})", style="bold"))
        for item in list_checkpoints(store.saver, thread_id):
            superstep = "?" if item.superstep is None else item.superstep
            console.print(
                f"{item.checkpoint_id}  superstep {superstep:>3}  "
                f"steps {item.steps:>2}  next {','.join(item.next) or '-':<8}  "
                f"status {item.status or '-'}"
            )


@app.command("graph", cls=HelpCommand)
def graph_command() -> None:
    """Print the graph as a Mermaid diagram."""
    print(build_graph().get_graph().draw_mermaid())


@snapshot_app.command("import", cls=HelpCommand)
@_guard
def snapshot_import(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="HotpotQA-format .json or {title,text} .jsonl files")],
    out: Annotated[Path, typer.Option("--out", help="the snapshot file to create or extend")],
) -> None:
    """Import pages into a snapshot (streaming; idempotent)."""
    from wikireact.sqlite_files import remove_database
    from wikireact.wiki.importer import import_file
    from wikireact.wiki.snapshot import SnapshotStore

    created = not out.exists()
    store: SnapshotStore | None = None
    try:
        store = SnapshotStore.create(out)
        for path in files:
            stats = import_file(path, store)
            console.print(
                f"{clean(path)}: {stats.read} pages read, {stats.added} added, {stats.changed} updated, "
                f"{stats.unchanged} unchanged"
            )
        console.print(f"{clean(out)}: {store.count()} pages, snapshot id {store.meta('snapshot_id')}")
    except BaseException:
        if created:  # a failed import leaves no file behind (an existing one keeps its pages)
            if store is not None:
                store.conn.close()
            remove_database(out)
        raise


from wikireact.cli.eval_command import eval_command, report_command  # noqa: E402

eval_app = typer.Typer(
    cls=EvalGroup, short_help="Evaluate a method, or compare runs (`eval report`).", no_args_is_help=True, rich_markup_mode=None, context_settings=CONTEXT_SETTINGS,
    help="Evaluate a method on HotpotQA-style questions (`eval DATASET` = `eval run DATASET`), "
    "or compare finished runs (`eval report DIR...`).",
)
eval_app.command("run", cls=HelpCommand)(_guard(eval_command))
eval_app.command("report", cls=HelpCommand)(_guard(report_command))
app.add_typer(eval_app, name="eval")


def main() -> None:
    """Entry point of the `wikireact` command."""
    try:
        app(prog_name="wikireact")
    except KeyboardInterrupt:
        errors.print("interrupted")
        sys.exit(130)
