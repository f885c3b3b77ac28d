"""`wikireact`: ask questions, resume and inspect episodes, build snapshots.

Every error a user can cause or meet (no key, bad question, unreadable snapshot,
unknown thread, model down, Ctrl-C) ends in one clear message and a non-zero exit
code, never a traceback (set WIKIREACT_DEBUG=1 to see one).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from wikireact.cli.common import (
    cli_message,
    console,
    errors,
    fail,
    guard,
    pause_gc,
    resume_gc,
    thread_config,
)
from wikireact.cli.eval_command import eval_command, report_command
from wikireact.cli.help import EvalGroup, HelpCommand
from wikireact.cli.interrupts import quiet_late_tasks
from wikireact.cli.options import (
    AgentOpt,
    ApproveOpt,
    CacheOpt,
    CandidatesOpt,
    ContextTokensOpt,
    DbOpt,
    IterationsOpt,
    JsonOpt,
    MaxInputTokensOpt,
    MaxModelCallsOpt,
    MaxOutputTokensOpt,
    MaxTrialsOpt,
    MemoryOpt,
    ModelOpt,
    OfflineOpt,
    ProtocolOpt,
    ResumeAgentOpt,
    ResumeApproveOpt,
    ResumeModelOpt,
    ResumeStepsOpt,
    ResumeWikiOpt,
    ReviewerOpt,
    StepsOpt,
    TaskOpt,
    VerifyFinishOpt,
    WikiOpt,
)
from wikireact.cli.studio import studio_command
from wikireact.cli.threads_command import threads_app

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from wikireact.agents.thread_record import ThreadRecord
    from wikireact.context import Context
    from wikireact.storage.threads import Threads

# `--help`, `--version` and each command's `-h` import only what they print (typer, rich and
# the option definitions): everything a command runs with is imported inside the command.
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
    help="Build offline Wikipedia snapshots.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
)
app.add_typer(snapshot_app, name="snapshot")


def _show_version(value: bool) -> None:
    if value:
        import importlib.metadata

        try:
            version = importlib.metadata.version("wikireact")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown (not installed)"
        print(f"wikireact {version}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
) -> None:
    """ReAct (Reason + Act) over Wikipedia as a checkpointed LangGraph state machine."""
    resume_gc()  # paused by `main` while Typer read the command line: every command runs with it


@app.command(cls=HelpCommand)
@guard
def ask(
    question: Annotated[
        str,
        typer.Argument(
            metavar="QUESTION",
            help="The question, or with --task fever the claim (at most 2,000 characters).",
            show_default=False,
        ),
    ],
    model: ModelOpt = None,
    wiki: WikiOpt = None,
    max_steps: StepsOpt = None,
    context_tokens: ContextTokensOpt = None,
    max_model_calls: MaxModelCallsOpt = None,
    max_input_tokens: MaxInputTokensOpt = None,
    max_output_tokens: MaxOutputTokensOpt = None,
    thread_id: Annotated[
        str | None,
        typer.Option(
            "--thread-id",
            metavar="ID",
            show_default="a random id",
            help="name the episode's thread",
        ),
    ] = None,
    db: DbOpt = None,
    approve: ApproveOpt = None,
    offline: OfflineOpt = False,
    model_cache: CacheOpt = None,
    as_json: JsonOpt = False,
    protocol: ProtocolOpt = None,
    reviewer: ReviewerOpt = None,
    agent: AgentOpt = "react",
    task: TaskOpt = None,
    max_trials: MaxTrialsOpt = None,
    memory: MemoryOpt = None,
    candidates: CandidatesOpt = None,
    max_iterations: IterationsOpt = None,
    verify_finish: VerifyFinishOpt = None,
) -> None:
    """Answer QUESTION (or label a claim), showing each Thought, Action and Observation."""
    pause_gc()  # until the episode runs
    import uuid
    from contextlib import closing

    from wikireact.agents import check_settings
    from wikireact.cli.episode import run_episode
    from wikireact.cli.hints import resume_hint
    from wikireact.cli.resolve import run_context, run_model, snapshot_id
    from wikireact.context import validate_question
    from wikireact.models.stack import stack_closed
    from wikireact.storage.threads import open_threads, runner, thread_question

    try:
        question = validate_question(question)
    except ValueError as exc:
        fail(cli_message(exc))
    agent = _agent_named(agent)
    agent_input = _agent_input(
        agent,
        max_trials=max_trials,
        memory=memory,
        candidates=candidates,
        max_iterations=max_iterations,
    )
    if offline:
        model, wiki = model or "local", wiki or "offline"
    context = run_context(
        {},
        model=model,
        wiki=wiki,
        max_steps=max_steps,
        approve=approve,
        protocol=protocol,
        task=task,
        verify_finish=verify_finish,
        context_tokens=context_tokens,
        max_model_calls=max_model_calls,
        max_input_tokens=max_input_tokens,
        max_output_tokens=max_output_tokens,
    )
    check_settings(agent, context)  # before the thread is registered: refused, nothing kept
    resources, chat_model = run_model(context, model_cache)
    thread_id = thread_id or uuid.uuid4().hex[:12]
    with stack_closed(chat_model), closing(open_threads(db)) as store, runner(store, thread_id):
        existing = thread_question(store, thread_id)
        if existing and existing != question:  # e.g. an eval's: never two questions in one thread
            fail(
                f"thread {thread_id!r} holds another question ({existing!r}); "
                "pick another --thread-id"
            )
        if existing is not None:
            fail(
                f"thread {thread_id!r} already exists; continue it with {resume_hint(thread_id, db)} "
                "or pick another --thread-id"
            )
        store.register(
            thread_id, question, context, snapshot_id=snapshot_id(context.wiki), agent=agent
        )
        run_episode(
            store,
            {"question": question, **agent_input},
            thread_id,
            context,
            as_json,
            resume_hint(thread_id, db),
            model=chat_model,
            wiki=resources.wiki,
            reviewer=reviewer,
            agent=agent,
        )


def _agent_named(name: str) -> str:
    """Return the agent `name` names, or end the command with one line listing the agents."""
    from wikireact.agents import check_agent
    from wikireact.errors import ConfigurationError

    try:
        return check_agent(name)
    except ConfigurationError as exc:
        fail(cli_message(exc))


def _thread_record(store: Threads, thread_id: str) -> ThreadRecord:
    """Return the thread's record (`wikireact.agents.thread_record`); print its note to stderr."""
    from rich.text import Text

    from wikireact.agents.thread_record import thread_record
    from wikireact.cli.display import clean

    record = thread_record(store, thread_id)
    if record.note is not None:
        errors.print(Text.assemble(("note:", "bold"), " ", clean(record.note)))
    return record


def _existing_store(db: str | None, thread_id: str, *, read_only: bool = False) -> Threads:
    """Open the checkpoint store that holds `thread_id`; never create an empty SQLite file."""
    from wikireact.storage.threads import default_db_path, is_postgres_url, open_threads

    path = db or default_db_path()
    if not is_postgres_url(db) and not Path(path).exists():
        fail(
            f"unknown thread id {thread_id!r}: there is no checkpoint file at {path} (wrong --db?)"
        )
    return open_threads(db, read_only=read_only)


def _checkpoint_config(store: Threads, thread_id: str, checkpoint_id: str) -> RunnableConfig:
    """Return the config of one of the thread's checkpoints; fail if it has no such checkpoint."""
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id}
    }
    if store.saver.get_tuple(config) is None:
        fail(
            f"thread {thread_id!r} has no checkpoint {checkpoint_id!r} (see `wikireact history {thread_id}`)"
        )
    return config


REOPENED_BY_INPUT = frozenset({"plan-execute"})
"""Agents whose graph reopens an episode out of budget when the question comes again with a
larger budget (their `route_start`); ReAct is reopened at its `observe` node instead."""
CONTINUED_BY_BUDGET = frozenset({"react", "plan-execute", "rewoo"})
"""Agents whose episode out of budget continues when a run raises the budget that stopped it."""
PLAN_STEPS = frozenset({"rewoo"})
"""Agents whose step limit bounds the plan they write, not the steps run after it: a larger
--max-steps never continues their episodes (a raised call or token budget does)."""
STOPPING_BUDGETS = ("max_model_calls", "max_input_tokens", "max_output_tokens")
"""The budgets besides steps that end an episode; the reason it gives ends with the one's name."""


def _extend_budget(
    store: Threads,
    thread_id: str,
    values: dict[str, Any],
    context: Context,
    agent: str,
    raised: list[str],
) -> bool:
    """Reopen a thread that ran out of budget when the run's budgets allow more, or say why not.

    `raised` names the budget options the run gives (`--max-steps`, `--max-model-calls`, ...).
    An agent whose runs out of budget stay ended is refused in one line, and so is a run
    whose limits would leave the thread out of budget, naming the option to raise: its steps
    (not for ReWOO, whose `max_steps` caps the plan it wrote), or the call or token budget it
    is still over. Return whether the question must be given again (the agent reopens
    through its input).
    """
    from wikireact.agents import load_agent
    from wikireact.episode.budgets import exceeded
    from wikireact.state import episode_ended

    steps = values.get("steps", 0)
    status = values.get("status")
    if not raised or not episode_ended(values):
        return False
    steps_raised = "--max-steps" in raised
    if status != "budget_exhausted":
        if steps_raised:
            fail(
                f"thread {thread_id!r} has ended ({status}), not run out of budget: "
                "a larger --max-steps cannot continue it"
            )
        return False
    if agent not in CONTINUED_BY_BUDGET:
        fail(
            f"thread {thread_id!r} is run by the {agent} agent, which a larger {raised[0]} "
            "cannot continue: ask the question again on a new thread"
        )
    if agent not in PLAN_STEPS and context.max_steps <= steps:
        fail(
            f"thread {thread_id!r} has used {steps} steps: --max-steps must be more than {steps} to continue it"
            if steps_raised
            else f"thread {thread_id!r} has also used its {steps} steps: resume it with "
            f"--max-steps N (more than {steps}) too"
        )
    still = exceeded(values.get("usage") or [], context, values.get("model_calls")) or ""
    budget = next((name for name in STOPPING_BUDGETS if still.endswith(f"({name})")), None)
    if budget is not None:
        fail(
            f"thread {thread_id!r} stopped at its {budget} budget "
            f"({still.removesuffix(f' ({budget})')}){', not its steps' if steps_raised else ''}: "
            f"resume it with --{budget.replace('_', '-')} N (more than {getattr(context, budget)})"
        )
    if not steps_raised or agent in PLAN_STEPS:
        return False  # the raised budget reopens it at the door (its graph's `continues`)
    if agent in REOPENED_BY_INPUT:
        return True
    graph = load_agent(agent).build_graph(store.saver)
    graph.update_state(thread_config(thread_id), {"status": "running"}, as_node="observe")
    return False


@app.command(
    cls=HelpCommand, short_help="Recap THREAD, then continue it (same settings unless given)."
)
@guard
def resume(
    thread_id: Annotated[
        str, typer.Argument(metavar="THREAD", help="The thread to continue.", show_default=False)
    ],
    model: ResumeModelOpt = None,
    wiki: ResumeWikiOpt = None,
    max_steps: ResumeStepsOpt = None,
    context_tokens: ContextTokensOpt = None,
    max_model_calls: MaxModelCallsOpt = None,
    max_input_tokens: MaxInputTokensOpt = None,
    max_output_tokens: MaxOutputTokensOpt = None,
    db: DbOpt = None,
    approve: ResumeApproveOpt = None,
    from_checkpoint: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="CHECKPOINT",
            show_default="the latest",
            help="continue from this checkpoint (see `history`): replays, or forks with new settings",
        ),
    ] = None,
    model_cache: CacheOpt = None,
    as_json: JsonOpt = False,
    reviewer: ReviewerOpt = None,
    agent: ResumeAgentOpt = None,
) -> None:
    """Recap THREAD's question and steps, then continue it with the settings it started with."""
    pause_gc()  # until the episode runs
    from contextlib import closing

    from rich.text import Text

    from wikireact.agents import check_settings, load_agent
    from wikireact.cli.display import clean, show_transcript
    from wikireact.cli.episode import run_episode
    from wikireact.cli.hints import resume_hint
    from wikireact.cli.resolve import check_same_snapshot, run_context, run_model
    from wikireact.models.stack import stack_closed
    from wikireact.storage.threads import runner

    with closing(_existing_store(db, thread_id)) as store:
        record = _thread_record(store, thread_id)
        question = record.question
        agent = _thread_agent(record.agent, thread_id, agent)
        context = run_context(
            record.settings,
            model=model,
            wiki=wiki,
            max_steps=max_steps,
            approve=approve,
            context_tokens=context_tokens,
            max_model_calls=max_model_calls,
            max_input_tokens=max_input_tokens,
            max_output_tokens=max_output_tokens,
        )
        check_settings(agent, context)
        resources, chat_model = run_model(context, model_cache)
        with stack_closed(chat_model):
            if wiki is None and record.note is None:  # a library thread's is not known
                check_same_snapshot(store, thread_id, context)
            with runner(store, thread_id):  # one runner per thread, across processes and machines
                start = (
                    _checkpoint_config(store, thread_id, from_checkpoint)
                    if from_checkpoint
                    else None
                )
                graph = load_agent(agent).build_graph(store.saver)
                values = graph.get_state(start or thread_config(thread_id)).values
                raised = [
                    "--" + name.replace("_", "-")
                    for name, value in (
                        ("max_steps", max_steps),
                        ("max_model_calls", max_model_calls),
                        ("max_input_tokens", max_input_tokens),
                        ("max_output_tokens", max_output_tokens),
                    )
                    if value is not None
                ]
                ask_again = start is None and _extend_budget(
                    store, thread_id, values, context, agent, raised
                )
                if not as_json:
                    console.print(Text.assemble(("Resuming thread ", "bold"), clean(thread_id)))
                    show_transcript(console, question, values, status=False)
                # no checkpoint yet, or an agent reopened through its input: the question again
                payload = {"question": question} if ask_again or not values else None
                run_episode(
                    store,
                    payload,
                    thread_id,
                    context,
                    as_json,
                    resume_hint(thread_id, db, max_steps),
                    start,
                    model=chat_model,
                    wiki=resources.wiki,
                    reviewer=reviewer,
                    agent=agent,
                )


AGENT_OPTIONS = {
    "max_trials": "reflexion",
    "memory": "reflexion",
    "candidates": "lats",
    "max_iterations": "lats",
}
"""The agents' own input fields that `ask` takes as options, and the agent each belongs to."""


def _agent_input(agent: str, **options: Any) -> dict[str, Any]:
    """Return the agent's own input fields given on the command line; refuse them for another agent."""
    given = {key: value for key, value in options.items() if value is not None}
    for owner in sorted({AGENT_OPTIONS[key] for key in given} - {agent}):
        names = ", ".join("--" + k.replace("_", "-") for k in given if AGENT_OPTIONS[k] == owner)
        fail(f"{names} belong to --agent {owner} (this question runs with --agent {agent})")
    return given


def _thread_agent(agent: str, thread_id: str, given: str | None) -> str:
    """Return `agent`, the agent of `thread_id`; refuse another one given with `--agent`, in one line."""
    if given is not None and _agent_named(given) != agent:
        fail(
            f"thread {thread_id!r} is run by the {agent} agent; a thread keeps its agent: "
            f"ask the question again with --agent {given} on a new thread"
        )
    return agent


@app.command(cls=HelpCommand, short_help="Show THREAD as a transcript, then its checkpoints.")
@guard
def history(
    thread_id: Annotated[
        str, typer.Argument(metavar="THREAD", help="The thread to show.", show_default=False)
    ],
    db: DbOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="print the audit trail as one JSON object")
    ] = False,
    html_file: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="write a page to step through THREAD in a browser (one file, works offline)",
        ),
    ] = None,
) -> None:
    """Show THREAD as a transcript (question, status, answer, steps), then its checkpoints."""
    from contextlib import closing

    from rich.text import Text

    from wikireact.agents import load_agent
    from wikireact.cli.display import show_transcript
    from wikireact.cli.hints import resume_hint
    from wikireact.episode.audit import history_json
    from wikireact.history import list_checkpoints

    with closing(_existing_store(db, thread_id, read_only=True)) as store:
        record = _thread_record(store, thread_id)
        graph = load_agent(record.agent).build_graph(store.saver)
        config = thread_config(thread_id)
        if html_file is not None:
            _write_thread_page(store, graph, thread_id, db, html_file, record)
            return
        if as_json:
            values = dict(graph.get_state(config).values)
            print(history_json(thread_id, record.question, record.settings, values))
            return
        show_transcript(console, record.question, graph.get_state(config).values)
        if record.agent == "lats":
            from wikireact.agents.lats.tree_view import show_tree

            show_tree(console, graph, config)
        console.print(
            Text(
                f"Checkpoints, newest first (continue from one: "
                f"{resume_hint(thread_id, db, checkpoint='CHECKPOINT')})",
                style="bold",
            )
        )
        for item in list_checkpoints(store.saver, thread_id):
            superstep = "?" if item.superstep is None else item.superstep
            console.print(
                f"{item.checkpoint_id}  superstep {superstep:>3}  "
                f"steps {item.steps:>2}  next {','.join(item.next) or '-':<8}  "
                f"status {item.status or '-'}"
            )


def _write_thread_page(
    store: Threads, graph: Any, thread_id: str, db: str | None, target: Path, record: ThreadRecord
) -> None:
    """Write THREAD's page (`wikireact.history_page`) to `target`; say where, or why not."""
    from wikireact.cli.hints import resume_command
    from wikireact.history_page import thread_page

    page = thread_page(
        graph,
        store.saver,
        thread_id=thread_id,
        question=record.question,
        agent=record.agent,
        settings=record.settings,
        command=lambda checkpoint: resume_command(thread_id, db, checkpoint=checkpoint),
    )
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")
    console.print(f"wrote {target}: open it in a browser (it needs no network)")


@app.command("graph", cls=HelpCommand)
@guard
def graph_command(agent: AgentOpt = "react") -> None:
    """Print the agent's graph as a Mermaid diagram."""
    from wikireact.agents import load_agent

    print(load_agent(_agent_named(agent)).build_graph().get_graph().draw_mermaid())


@snapshot_app.command("import", cls=HelpCommand)
@guard
def snapshot_import(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH...",
            help="the 2017 abstracts dump (its folder, one .bz2 or the .tar.bz2), "
            "HotpotQA-format .json or {title,text} .jsonl files",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="the snapshot file to create or extend")],
    skip_bad_lines: Annotated[
        bool,
        typer.Option(
            "--skip-bad-lines", help="skip unreadable dump lines and damaged files, and count them"
        ),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", min=1, help="dump parsing processes", show_default="one per core"
        ),
    ] = None,
) -> None:
    """Import pages into a snapshot (streaming; idempotent; a new file appears only when complete)."""
    from wikireact.cli.snapshot_command import import_snapshot

    import_snapshot(files, out, skip_bad_lines=skip_bad_lines, workers=workers)


app.command("studio", cls=HelpCommand)(studio_command)

eval_app = typer.Typer(
    cls=EvalGroup,
    short_help="Evaluate a method, or compare runs (`eval report`).",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
    help="Evaluate a method on HotpotQA-style questions (`eval DATASET` = `eval run DATASET`), "
    "or compare finished runs (`eval report DIR...`).",
)
eval_app.command("run", cls=HelpCommand)(guard(eval_command))
eval_app.command("report", cls=HelpCommand)(guard(report_command))
app.add_typer(eval_app, name="eval")
threads_app.command("show", cls=HelpCommand, short_help="= history THREAD.")(history)
app.add_typer(threads_app, name="threads")


def main() -> None:
    """Entry point of the `wikireact` command."""
    from wikireact.cli import common

    common.cli_process = True
    pause_gc()  # while Typer builds the commands and reads the command line (see `_options`)
    quiet_late_tasks()
    try:
        app(prog_name="wikireact")
    except KeyboardInterrupt:
        errors.print("interrupted")
        sys.exit(130)
