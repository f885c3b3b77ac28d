"""Running one episode from the terminal: live steps, approval prompts, the result or a resume hint."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from rich.text import Text

from wikireact.agents import DEFAULT_AGENT, load_agent
from wikireact.agents.channels import agent_channels
from wikireact.cli.approval import ApprovalPrompt
from wikireact.cli.common import console, errors, fail, resume_gc, thread_config
from wikireact.cli.display import clean, result_json, show_result, show_step
from wikireact.context import Context
from wikireact.episode.audit import signed
from wikireact.errors import (
    ConfigurationError,
    EpisodeStoppedError,
    LockLostError,
    WikiOutageError,
    cli_message,
    first_line,
)
from wikireact.models.stack import behind_cache
from wikireact.state import episode_ended
from wikireact.storage.retention import KEEP_ENV, apply_policy, policy_from_env
from wikireact.storage.threads import Threads, database_errors
from wikireact.wiki.base import WikiSource


def _proposed_step(pending: Any) -> int:
    """Return the number of the step `pending` (a paused state) asks about."""
    step = pending.interrupts[0].value.get("step")
    return int(step) if isinstance(step, int) else pending.values.get("steps", 0) + 1


def _decide(prompt: ApprovalPrompt, pending: Any) -> Any:
    """Ask the person at the terminal about the action `pending` (a paused state) proposes.

    The Thought is ReAct's step in progress, or the one the proposal carries (ReWOO's plan step).
    """
    proposal = pending.interrupts[0].value
    thought = (pending.values.get("current") or {}).get("thought") or proposal.get("thought", "")
    return prompt.decide(proposal, _proposed_step(pending), thought)


def _drive(
    store: Threads,
    payload: Any,
    thread_id: str,
    context: Context,
    quiet: bool,
    start: RunnableConfig | None = None,
    model: BaseChatModel | None = None,
    reviewer: str | None = None,
    wiki: WikiSource | None = None,
    agent: str = DEFAULT_AGENT,
) -> dict[str, Any]:
    """Run the episode to its end, showing steps live and asking for approvals.

    `payload` None continues the thread (asking first if it is paused for approval);
    `start` is a checkpoint's config to continue from instead of the latest one; `model`
    and `wiki` are the resources resolved for this run (`cli.resolve`); `agent` names the
    graph that runs it (`wikireact.agents`).
    """
    with _long_term_memory(agent, store) as memory:
        return _drive_graph(
            load_agent(agent).build_graph(store.saver, model=model, wiki=wiki, **memory),
            payload,
            thread_id,
            context,
            quiet=quiet,
            start=start,
            reviewer=reviewer,
            live_text=_streams_tokens(model),
        )


def _streams_tokens(model: BaseChatModel | None) -> bool:
    """Whether `model` writes its replies token by token (the local llama.cpp models)."""
    if model is None or type(model).__module__ != "wikireact.models.local.llama":
        return False  # imported only when it is already in use
    from wikireact.models.local.llama import LlamaCppChatModel

    return isinstance(model, LlamaCppChatModel)


def _writing(text: str) -> Text:
    """Return the live status line while the model writes: the end of its latest line so far."""
    line = text.rstrip("\n").rsplit("\n", 1)[-1]
    return Text.assemble(("Writing: ", "dim"), clean(line)[-120:])


@contextmanager
def _long_term_memory(agent: str, threads: Threads) -> Iterator[dict[str, Any]]:
    """Yield `build_graph`'s long-term store argument for agents that remember (Reflexion).

    The store lives in the threads' database (`wikireact.storage.long_term`) and is closed
    after the run.
    """
    if agent != "reflexion":
        yield {}
        return
    from wikireact.storage.long_term import close_store, store_of

    store = store_of(threads)
    try:
        yield {"store": store}
    finally:
        close_store(store)


def _drive_graph(
    graph: Any,
    payload: Any,
    thread_id: str,
    context: Context,
    *,
    quiet: bool,
    start: RunnableConfig | None,
    reviewer: str | None,
    live_text: bool = False,
) -> dict[str, Any]:
    """Run `graph` on the thread until it ends or waits for a decision it cannot get.

    With `live_text` the status line shows the model's reply as it is written.
    """
    config = thread_config(thread_id)
    run_config = start or config
    prompt = ApprovalPrompt(errors)
    thought_shown: set[int] = set()  # steps whose Thought the approval prompt printed
    while True:
        if payload is None:
            pending = graph.get_state(run_config)
            if pending.interrupts and context.approve:
                thought_shown.add(_proposed_step(pending))
                payload = Command(resume=signed(_decide(prompt, pending), reviewer))
        modes = ["updates", "custom", *(["messages"] if live_text and not quiet else [])]
        with console.status("Thinking…", spinner="dots") if not quiet else nullcontext() as status:
            written: dict[str | None, str] = {}  # the text of each model call so far
            for mode, chunk in graph.stream(
                payload, run_config, context=context, stream_mode=modes, durability="sync"
            ):
                if mode == "messages" and status is not None:
                    text = written[chunk[0].id] = written.get(chunk[0].id, "") + chunk[0].text
                    status.update(_writing(text))
                if mode == "custom" and not quiet and isinstance(chunk, dict):
                    show_step(console, chunk, thought=chunk.get("step") not in thought_shown)
        run_config, payload = config, None
        state = graph.get_state(config)
        if not state.interrupts:
            return dict(state.values)


def run_episode(
    store: Threads,
    payload: Any,
    thread_id: str,
    context: Context,
    as_json: bool,
    hint: str,
    start: RunnableConfig | None = None,
    model: BaseChatModel | None = None,
    reviewer: str | None = None,
    wiki: WikiSource | None = None,
    agent: str = DEFAULT_AGENT,
) -> None:
    """Drive the episode and print its result; `hint` tells how to resume it (`resume_hint`).

    Once it has ended, the retention policy `WIKIREACT_KEEP` (when set) is applied to the
    store, this thread included (`wikireact.storage.retention`).
    """
    policy = policy_from_env()  # a bad setting stops here, before the episode runs
    resume_gc(started=True)  # paused while the command started (`pause_gc`)
    try:
        result = _drive(
            store,
            payload,
            thread_id,
            context,
            quiet=as_json,
            start=start,
            model=model,
            reviewer=reviewer,
            wiki=wiki,
            agent=agent,
        )
    except KeyboardInterrupt:
        fail(f"interrupted; the episode is saved: continue it with {hint}", 130)
    except EOFError:
        fail(
            f"no answer at the approval prompt (end of input); the episode is saved: continue it with {hint}",
            130,
        )
    except EpisodeStoppedError as exc:
        if isinstance(exc.__cause__, ConfigurationError):  # e.g. a model-cache row: fix it first
            fail(
                f"{str(exc.__cause__).rstrip('.')}. The episode is saved: once that is fixed, "
                f"continue with {hint}",
                1,
            )
        alternative = " (or with --wiki offline)" if isinstance(exc, WikiOutageError) else ""
        fail(
            f"{cli_message(exc).rstrip('.')}. The episode is saved: continue it later with {hint}{alternative}",
            1,
        )
    except database_errors() as exc:  # e.g. a full disk, or the database server went away
        if store.lock_lost():  # nothing more was saved: another process may take it over
            fail(
                f"{LockLostError.explain(store.location, exc)}: the episode stopped before its next save. The "
                f"steps saved so far are kept: continue with {hint}",
                1,
            )
        fail(
            f"cannot save the episode in {store.location}: {first_line(exc)}. The steps saved so far are kept: "
            f"once that is fixed, continue with {hint}",
            1,
        )
    if as_json:
        print(result_json(result, thread_id))
    else:
        show_result(console, result, thread_id)
    cached = behind_cache(model)
    if cached is not None:
        errors.print(f"model cache: {cached.hits} hits, {cached.misses} misses")
    if policy is not None and result and episode_ended(result):
        kept = apply_policy(store, policy, channels_of=agent_channels, held={thread_id})
        if kept.pruned or kept.deleted:
            errors.print(
                f"{KEEP_ENV}: pruned {len(kept.pruned)} threads, deleted {len(kept.deleted)}"
            )
    if result.get("status") == "context_exhausted":
        fail(context_exhausted_line(result, hint), 1)


def context_exhausted_line(result: dict[str, Any], hint: str) -> str:
    """Return the one line that says the episode ran out of context and how to continue it."""
    command, sep, rest = hint.partition("` ")
    larger = f"{command.rstrip('`')} --context-tokens N`{' ' + rest if sep else ''}"
    return (
        f"{str(result.get('stop_reason') or 'the prompt does not fit').rstrip('.')}. The episode "
        f"is saved: continue it with a larger window, {larger} (N more tokens than now), or "
        "with another --model"
    )
