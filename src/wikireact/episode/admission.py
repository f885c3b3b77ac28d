"""The door of a run: what `EpisodeGraph` checks before LangGraph touches the thread.

LangGraph applies a run's input as soon as it starts: a new question on a thread
discards the step in progress and overwrites the question, and a context dict with a
key the agent does not know fails inside LangGraph. So these checks come first:

- The context is read with `Context.read` (text values, foreign keys, one-line errors)
  and checked against the episode's kept settings (`wikireact.episode.stored_context`).
- Turning approval off while a step waits for a decision, without giving one, approves it
  (`wikireact resume --no-approve` at a pause); a decision given with it is used.
- The question is read once, here, for every agent (`validate_question`: invalid Unicode
  replaced, stripped); the episode starts with the question as read.
- One thread holds one episode. A question other than the thread's is refused. The
  thread's own question continues its episode where it stopped (as `invoke(None, ...)`
  does), or returns it unchanged once it has ended. An input of None reopens an
  episode that stopped before the recursion limit, or ran out of a budget the run's
  context now raises (the agent's rule: `EpisodeGraph.continues`).
- One run per top-level thread at a time in this process (`hold`); across processes the
  CLI's run lock does the same.
- `approve` needs a checkpointer (a pause could not be resumed), and the recursion limit
  must leave room for one step of the agent's work: at least the agent's own
  `MIN_RECURSION_LIMIT` (`wikireact.episode.recursion`), named in the refusal.

Inside a parent graph's task (a non-empty `checkpoint_ns`), the thread's values are not
read and the run is not held: LangGraph gives each call of the agent in a task its own
namespace, so each is its own episode there. The context and approval checks hold.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.runtime import get_runtime
from langgraph.types import Command, StateSnapshot

from wikireact.context import Context, validate_question
from wikireact.episode.recursion import LeastLimit
from wikireact.episode.stored_context import can_continue, settle
from wikireact.errors import ConfigurationError, ThreadBusyError
from wikireact.protocols.text import valid_unicode

DEFAULT_RECURSION_LIMIT = 10_007
"""LangGraph's default `recursion_limit` (1.2)."""
Continues = Callable[[Mapping[str, Any], Context], bool]
"""An agent's rule for whether an episode has work left under a run's settings (`can_continue`)."""
REOPENED_THROUGH_START = frozenset({"recursion_limit", "budget_exhausted", "context_exhausted"})
"""Statuses whose run ended at END: an episode that can go on continues from START."""


@dataclass(frozen=True)
class Thread:
    """The checkpointed thread a run works on."""

    saver: BaseCheckpointSaver
    config: RunnableConfig
    """The thread's config: thread id, namespace and (for a replay) checkpoint id."""
    nested: bool
    """Whether the run is a task of a parent graph (then its values are not read here)."""

    @property
    def thread_id(self) -> str:
        """The thread's id."""
        return str(self.config["configurable"]["thread_id"])

    @property
    def state_config(self) -> RunnableConfig:
        """The config that reads the thread's state with its saver (`get_state`)."""
        return {
            "configurable": {**self.config["configurable"], CONFIG_KEY_CHECKPOINTER: self.saver}
        }

    @property
    def key(self) -> tuple[int, str, str]:
        """What identifies the thread among runs in this process."""
        configurable = self.config["configurable"]
        return (id(self.saver), self.thread_id, configurable.get("checkpoint_ns", ""))


@dataclass(frozen=True)
class Admitted:
    """What LangGraph is given for an admitted run."""

    input: Any
    context: Context | None
    """The context read at the door (None: the run inherits its parent's, or uses the kept settings)."""


def thread_of(own_saver: Any, config: RunnableConfig | None) -> Thread | None:
    """Return the thread a run with `config` works on (None: no checkpointer, no thread).

    The saver is resolved as LangGraph does: a parent's, lent through the config, else
    the graph's own (`own_saver`); `checkpointer=False` has none.
    """
    merged = ensure_config(config)  # a run inside a parent's task inherits its config
    configurable = merged.get("configurable") or {}
    if own_saver is False:
        return None
    saver = configurable.get(CONFIG_KEY_CHECKPOINTER, own_saver)
    if not isinstance(saver, BaseCheckpointSaver) or configurable.get("thread_id") is None:
        return None
    namespace = str(configurable.get("checkpoint_ns") or "")
    keys = ("thread_id", "checkpoint_ns", "checkpoint_id")
    own = {key: configurable[key] for key in keys if configurable.get(key) is not None}
    return Thread(saver, {"configurable": {**own, "checkpoint_ns": namespace}}, bool(namespace))


@dataclass(frozen=True)
class Seen:
    """What the door reads of a thread's checkpoint."""

    values: dict[str, Any]
    """Its plain channel values (question, status, steps, settings, ...)."""
    paused: bool
    """Whether an interrupt (an approval) waits for a decision there."""


def thread_seen(snapshot: StateSnapshot) -> Seen | None:
    """Return what the door needs of a thread's state (None: no checkpoint yet).

    It reads the whole state (`get_state`, ~0.6 ms for a 20-step thread), because the
    settings are a delta channel, which a checkpoint's plain values do not hold.
    """
    return Seen(dict(snapshot.values), bool(snapshot.interrupts)) if snapshot.values else None


_RUNNING: set[tuple[int, str, str]] = set()
_RUNNING_LOCK = threading.Lock()


@contextmanager
def hold(thread: Thread | None) -> Iterator[None]:
    """Run on `thread` as its only run in this process, or raise `ThreadBusyError` at once.

    Runs inside a parent's task are not held: LangGraph gives each call of a subgraph in
    one task its own namespace (`task|1`, `task|2`, ...), so they never share a thread.
    """
    if thread is None or thread.nested:
        yield
        return
    with _RUNNING_LOCK:
        if thread.key in _RUNNING:
            raise ThreadBusyError(
                f"thread {thread.thread_id!r} is already running in this process; one thread "
                "runs one episode at a time: wait for that run, or use another thread_id"
            )
        _RUNNING.add(thread.key)
    try:
        yield
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(thread.key)


def admit(
    input: Any,
    config: RunnableConfig | None,
    context: Any,
    thread: Thread | None,
    seen: Seen | None,
    least: LeastLimit,
    continues: Continues = can_continue,
) -> Admitted:
    """Check a run at the door; return the input and context to give LangGraph.

    `seen` is the thread's checkpoint (None: no checkpoint, or not read); `least` the
    agent's least recursion limit; `continues` its rule for reopening a stopped episode.
    Raises `ConfigurationError` with one line; nothing has run then.
    """
    values = seen.values if seen is not None else None
    limit = ensure_config(config).get("recursion_limit", DEFAULT_RECURSION_LIMIT)
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise ConfigurationError(f"recursion_limit must be a whole number, got {limit!r}")
    if limit < least.limit:
        raise ConfigurationError(
            f"recursion_limit {limit} leaves no room for one {least.agent} step: "
            f"use at least {least.limit}"
        )
    read = Context.read(context) if context is not None else None
    stored = (values or {}).get("context") or {}
    settings = settle(stored, read or _inherited_context())
    if settings.approve and thread is None:
        raise ConfigurationError(
            "approve needs a checkpointer: a run paused for approval is resumed from its "
            "thread (build_graph(checkpointer=...), and a thread_id in the config)"
        )
    if isinstance(input, Command):
        return Admitted(input, read)
    if input is None and seen is not None and seen.paused:
        # Turning approval off (approve=False) while a step waits for a decision approves it.
        turned_off = stored.get("approve") and not settings.approve
        return Admitted(Command(resume=True) if turned_off else None, read)
    held = values is not None and values.get("question") is not None and thread is not None
    if input is not None:
        question = _question_of(input)
        if not held or thread is None or values is None:
            return Admitted({**input, "question": question}, read)  # the question as read
        check_question(thread.thread_id, values, question)
    elif not held or values is None:
        return Admitted(None, read)
    # The thread's own episode: reopen it through START (which ends at once for an ended
    # episode), or continue where it stopped, keeping the step in progress.
    reopens = values.get("status") in REOPENED_THROUGH_START and continues(values, settings)
    return Admitted({"question": values["question"]} if reopens else None, read)


def _question_of(input: Any) -> str:
    """Return the input's question, validated (one line for a bad one)."""
    if not isinstance(input, Mapping) or "question" not in input:
        raise ConfigurationError('the input must be {"question": "..."} (or None to continue)')
    try:
        return validate_question(input["question"])
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None


def check_question(thread_id: object, values: Mapping[str, Any], question: str) -> None:
    """Refuse `question` on a thread whose `values` hold another one (one thread, one episode)."""
    held = valid_unicode(str(values.get("question"))).strip()
    if valid_unicode(question).strip() != held:
        raise ConfigurationError(
            f"thread {thread_id!r} holds the episode of another question ({held!r}); "
            "one thread holds one episode: use a new thread_id for this question"
        )


def _inherited_context() -> Any:
    """Return the context of the parent graph whose task runs this one (None at the top)."""
    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a graph's task
        return None
    return runtime.context if runtime is not None else None
