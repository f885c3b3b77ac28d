"""`wikireact threads`: list, show, prune, delete, vacuum and count the threads of a store.

Every command reads a SQLite file or a PostgreSQL URL (`--db`) and prints the same lines
for either (only sizes differ). `prune` and `delete` act on the threads a selection names
(ids, `--status`, `--agent`, `--older-than`, or `--all`); `show` is `history`
(registered by `wikireact.cli.app`), skip and name a thread another
process is running (its run lock is held), and with `--dry-run` only say what would go
(the SQLite file is opened read-only: not a byte of it changes). What stays after a prune:
each thread's latest checkpoint, so its final output, `history`'s transcript and audit
trail, and `resume`; time travel to earlier checkpoints goes.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from wikireact.cli.common import console, fail, guard
from wikireact.cli.options import DbOpt

if TYPE_CHECKING:
    from wikireact.storage.catalog import ThreadInfo
    from wikireact.storage.retention import Outcome, PolicyOutcome, Selection
    from wikireact.storage.threads import Threads

threads_app = typer.Typer(
    help="List, show, prune, delete and vacuum the threads of a store (--db).",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "show_default": True},
)

IdsArg = Annotated[
    list[str] | None,
    typer.Argument(metavar="[THREAD]...", help="threads to act on", show_default=False),
]
StatusOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--status",
        metavar="STATUS",
        help="only threads with this status (finished, budget_exhausted, running, ...; repeatable)",
        show_default=False,
    ),
]
AgentFilterOpt = Annotated[
    str | None,
    typer.Option("--agent", metavar="AGENT", help="only threads of this agent", show_default=False),
]
OlderOpt = Annotated[
    str | None,
    typer.Option(
        "--older-than",
        metavar="DURATION",
        help="only threads last updated more than this long ago (30d, 12h, 90m, 2w)",
        show_default=False,
    ),
]
AllOpt = Annotated[bool, typer.Option("--all", help="every thread of the store")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="say what would go; change nothing")]
JsonFlag = Annotated[bool, typer.Option("--json", help="print JSON")]


@contextmanager
def _open(db: str | None, *, read_only: bool = False) -> Iterator[Threads]:
    """Open an existing store (never create an empty SQLite file)."""
    from wikireact.storage.threads import default_db_path, is_postgres_url, open_threads

    path = db or default_db_path()
    if not is_postgres_url(db) and not Path(path).exists():
        fail(f"there is no checkpoint file at {path} (wrong --db?)")
    with closing(open_threads(db, read_only=read_only)) as store:
        yield store


def _selection(
    ids: Sequence[str] | None,
    statuses: Sequence[str] | None,
    agent: str | None,
    older_than: str | None,
    everything: bool = False,
) -> Selection:
    from wikireact.storage.retention import Selection, parse_duration

    return Selection(
        ids=tuple(ids or ()),
        statuses=frozenset(statuses or ()),
        agent=agent,
        older_than=parse_duration(older_than) if older_than is not None else None,
        everything=everything,
    )


def _when(updated: float) -> str:
    if not updated:
        return "-"
    return datetime.fromtimestamp(updated, UTC).strftime("%Y-%m-%d %H:%M")


def _row(info: ThreadInfo) -> Text:
    from wikireact.cli.display import clean

    question = clean(info.question)
    return Text(
        f"{info.thread_id:<14} {info.agent:<12} {info.task:<8} {info.status:<17} "
        f"{info.steps:>5} {_when(info.updated):<16} {info.checkpoints:>6} {info.bytes:>11,}  "
        f"{question[:60] + ('…' if len(question) > 60 else '')}"
    )


def _header() -> Text:
    return Text(
        f"{'THREAD':<14} {'AGENT':<12} {'TASK':<8} {'STATUS':<17} {'STEPS':>5} "
        f"{'UPDATED (UTC)':<16} {'CHECKP':>6} {'BYTES':>11}  QUESTION",
        style="bold",
    )


@threads_app.command("list")
@guard
def list_command(
    db: DbOpt = None,
    status: StatusOpt = None,
    agent: AgentFilterOpt = None,
    older_than: OlderOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """List the store's threads: id, agent, task, status, steps, last update, size, question."""
    from wikireact.agents.thread_record import with_checkpoint_records
    from wikireact.storage.catalog import list_threads
    from wikireact.storage.retention import select

    selection = _selection(None, status, agent, older_than)
    with _open(db, read_only=True) as store:
        infos = select(with_checkpoint_records(store, list_threads(store)), selection, time.time())
    if as_json:
        print(json.dumps([info.as_json() for info in infos], ensure_ascii=False))
        return
    console.print(_header())
    for info in infos:
        console.print(_row(info))
    console.print(f"{len(infos)} threads, {sum(i.bytes for i in infos):,} bytes")


def _selected(store: Threads, selection: Selection, everything: bool) -> list[ThreadInfo]:
    from wikireact.storage.catalog import list_threads
    from wikireact.storage.retention import select

    if selection.is_empty() and not everything:
        fail("say which threads: THREAD..., --status, --agent, --older-than, or --all")
    return select(list_threads(store), selection, time.time())


def _report(verb: str, outcome: Outcome, dry_run: bool) -> None:
    would = "would " if dry_run else ""
    for info in outcome.done:
        console.print(
            Text(
                f"{would}{verb} {info.thread_id}  ({info.status}, {info.checkpoints} checkpoints, "
                f"{info.bytes:,} bytes)"
            )
        )
    console.print(f"{would}{verb} {len(outcome.done)} threads")
    _report_running(outcome.running)


def _report_running(running: Sequence[str]) -> None:
    if running:
        console.print(
            Text(
                f"skipped {len(running)} running threads (another process holds their run lock): "
                + ", ".join(running),
                style="yellow",
            )
        )


@threads_app.command("prune")
@guard
def prune_command(
    thread_ids: IdsArg = None,
    db: DbOpt = None,
    status: StatusOpt = None,
    agent: AgentFilterOpt = None,
    older_than: OlderOpt = None,
    everything: AllOpt = False,
    policy: Annotated[
        bool, typer.Option("--policy", help="apply the retention policy of WIKIREACT_KEEP")
    ] = False,
    dry_run: DryRunOpt = False,
) -> None:
    """Keep only each thread's latest checkpoint (its answer, transcript and audit trail stay)."""
    from wikireact.agents.channels import agent_channels
    from wikireact.storage.retention import apply_policy, policy_from_env, prune_threads

    if policy:
        rules = policy_from_env()
        if rules is None:
            fail("--policy needs WIKIREACT_KEEP, e.g. WIKIREACT_KEEP=latest:7d")
        with _open(db, read_only=dry_run) as store:
            kept = apply_policy(store, rules, channels_of=agent_channels, dry_run=dry_run)
            _report_policy(kept, dry_run)
        return
    selection = _selection(thread_ids, status, agent, older_than, everything)
    with _open(db, read_only=dry_run) as store:
        infos = _selected(store, selection, everything)
        outcome = prune_threads(store, infos, channels_of=agent_channels, dry_run=dry_run)
        _report("prune", outcome, dry_run)


def _report_policy(outcome: PolicyOutcome, dry_run: bool) -> None:
    would = "would " if dry_run else ""
    for verb, infos in (("delete", outcome.deleted), ("prune", outcome.pruned)):
        for info in infos:
            console.print(Text(f"{would}{verb} {info.thread_id}  ({info.status})"))
    console.print(
        f"{would}prune {len(outcome.pruned)} threads, {would}delete {len(outcome.deleted)}"
    )
    _report_running(outcome.running)


@threads_app.command("delete")
@guard
def delete_command(
    thread_ids: IdsArg = None,
    db: DbOpt = None,
    status: StatusOpt = None,
    agent: AgentFilterOpt = None,
    older_than: OlderOpt = None,
    everything: AllOpt = False,
    lessons: Annotated[
        bool,
        typer.Option("--lessons", help="also delete the Reflexion lessons these threads left"),
    ] = False,
    dry_run: DryRunOpt = False,
) -> None:
    """Delete threads: checkpoints, writes, registry row (and with --lessons, their lessons)."""
    from wikireact.storage.retention import delete_threads

    selection = _selection(thread_ids, status, agent, older_than, everything)
    with _open(db, read_only=dry_run) as store:
        infos = _selected(store, selection, everything)
        before = functools.partial(_delete_lessons, store) if lessons else None
        outcome = delete_threads(store, infos, dry_run=dry_run, before_delete=before)
        _report("delete", outcome, dry_run)


def _delete_lessons(store: Threads, info: ThreadInfo) -> None:
    """Delete the lessons a Reflexion thread's trials left in the store (keys `THREAD:TRIAL`)."""
    from wikireact.agents.reflexion.memory import question_namespace
    from wikireact.storage.long_term import close_store, store_of

    if info.agent != "reflexion":
        return
    memory = store_of(store)
    try:
        namespace = question_namespace(info.question)
        for item in memory.search(namespace, limit=10_000):
            if item.key.startswith(f"{info.thread_id}:"):
                memory.delete(namespace, item.key)
    finally:
        close_store(memory)


@threads_app.command("vacuum")
@guard
def vacuum_command(
    db: DbOpt = None,
    full: Annotated[
        bool,
        typer.Option("--full", help="PostgreSQL: VACUUM FULL (rewrites the tables, locking them)"),
    ] = False,
) -> None:
    """Give the space pruned threads left back (SQLite: VACUUM; PostgreSQL: VACUUM [FULL])."""
    from wikireact.errors import first_line
    from wikireact.storage.catalog import store_bytes, vacuum
    from wikireact.storage.threads import DATABASE_ERRORS

    with _open(db) as store:
        before = store_bytes(store)
        try:
            vacuum(store, full=full)
        except DATABASE_ERRORS as exc:  # e.g. another process holds the file: retry later
            fail(f"cannot vacuum {store.location}: {first_line(exc)}")
        after = store_bytes(store)
        console.print(Text(f"vacuumed {store.location}: {before:,} -> {after:,} bytes"))


@threads_app.command("stats")
@guard
def stats_command(
    db: DbOpt = None,
    largest: Annotated[
        int, typer.Option("--largest", metavar="N", help="largest threads shown")
    ] = 5,
    as_json: JsonFlag = False,
) -> None:
    """Count the store's threads and checkpoints; bytes by table; its largest threads."""
    from wikireact.storage.catalog import list_threads, store_stats

    with _open(db, read_only=True) as store:
        stats = store_stats(store)
        top = sorted(list_threads(store), key=lambda i: (-i.bytes, i.thread_id))[:largest]
    if as_json:
        print(
            json.dumps(
                {
                    "threads": stats.threads,
                    "checkpoints": stats.checkpoints,
                    "tables": stats.tables,
                    "total_bytes": stats.total_bytes,
                    "largest": [info.as_json() for info in top],
                },
                ensure_ascii=False,
            )
        )
        return
    console.print(
        f"{stats.threads:,} threads, {stats.checkpoints:,} checkpoints, {stats.total_bytes:,} bytes"
    )
    console.print(Text("bytes by table", style="bold"))
    for name, size in stats.tables.items():
        console.print(f"  {name:<20} {size:>14,}")
    console.print(Text("largest threads", style="bold"))
    console.print(_header())
    for info in top:
        console.print(_row(info))
