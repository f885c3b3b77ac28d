"""From command-line options to a run's settings and open resources, resolved once per command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from langchain_core.language_models import BaseChatModel

from wikireact.cli.common import errors, fail
from wikireact.cli.display import clean
from wikireact.context import Context
from wikireact.episode.resources import Resources, resolve_resources
from wikireact.errors import MissingApiKeyError, cli_message
from wikireact.models.registry import absolute_model_spec
from wikireact.models.stack import model_stack
from wikireact.storage.threads import Threads
from wikireact.wiki.factory import absolute_wiki_spec, open_source
from wikireact.wiki.snapshot import SnapshotSource


def run_context(base: dict[str, Any], **overrides: Any) -> Context:
    """Return the run's settings, with file paths made absolute (they are stored with the thread)."""
    values = {**base, **{k: v for k, v in overrides.items() if v is not None}}
    try:
        context = Context(**values)
    except (TypeError, ValueError) as exc:
        fail(cli_message(exc))
    context.model, context.wiki = (
        absolute_model_spec(context.model),
        absolute_wiki_spec(context.wiki),
    )
    return context


def open_resources(context: Context, *, key_optional: bool = False) -> Resources:
    """Resolve `context` into open resources once; a bad setting ends the command with one line."""
    try:
        return resolve_resources(context, key_optional=key_optional)
    except MissingApiKeyError as exc:  # its message is a short paragraph on where to get a key
        errors.print(clean(cli_message(exc)))
        raise typer.Exit(2) from None


def run_model(context: Context, cache: Path | None) -> tuple[Resources, BaseChatModel | None]:
    """Resolve the run's resources and its model: the resolved one, or it behind `--model-cache`.

    With a model cache a replay needs no API key: the model loads at the first call the
    cache does not hold (and fails then, with the missing key's reason).
    """
    resources = open_resources(context, key_optional=cache is not None)
    if cache is None:
        return resources, resources.model
    return resources, model_stack(context.model, model=resources.model, cache=cache)


def snapshot_id(wiki: str) -> str | None:
    """Return the id of the snapshot `wiki` names (None for live sources and unnamed snapshots)."""
    source = open_source(wiki)
    return source.snapshot_id if isinstance(source, SnapshotSource) else None


def check_same_snapshot(store: Threads, thread_id: str, context: Context) -> None:
    """Refuse to resume a thread on a snapshot other than the one it started on."""
    started_on = store.snapshot_id(thread_id)
    now = snapshot_id(context.wiki)
    if started_on is not None and now != started_on:
        fail(
            f"the snapshot {context.wiki} changed since thread {thread_id} started (snapshot id "
            f"{started_on}, now {now}); resuming would mix two wikis: restore it, or pass --wiki "
            "to resume on another snapshot on purpose"
        )
