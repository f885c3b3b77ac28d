"""Which threads to prune or delete, doing it without touching a running one, and `WIKIREACT_KEEP`.

A thread is pruned (`keep_latest`: its latest checkpoint per namespace stays, its delta
channels written whole, `wikireact.storage.materialise`) or deleted (checkpoints, writes,
registry row and, when asked, its Reflexion lessons) only while this process holds its
run lock: a thread that another process runs is skipped and named, never touched.

`WIKIREACT_KEEP` is a retention policy for ended threads (statuses in
`wikireact.state.ENDED`), rules separated by commas: `latest` (prune every ended thread),
`latest:7d` (those last updated more than 7 days ago), `delete:90d` (delete them).
`threads prune --policy` applies it, and so does every finished episode when it is set.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from wikireact.errors import ConfigurationError, ThreadsError
from wikireact.state import ENDED
from wikireact.storage.catalog import ThreadInfo, list_threads, unregister
from wikireact.storage.materialise import Specs
from wikireact.storage.threads import Threads

KEEP_ENV = "WIKIREACT_KEEP"
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
Action = Literal["latest", "delete"]
ChannelsOf = Callable[[str], Specs]
"""An agent's name -> the delta channels its threads hold."""


def parse_duration(text: str) -> float:
    """Return the seconds of a duration such as `30d`, `12h`, `90m`, `2w` or `45s`."""
    value, unit = text.strip()[:-1], text.strip()[-1:].lower()
    if unit not in UNITS or not value.isdigit():
        raise ConfigurationError(
            f"bad duration {text!r}: use a whole number and a unit, e.g. 30d, 12h, 90m, 2w, 45s"
        )
    return int(value) * UNITS[unit]


@dataclass(frozen=True)
class Selection:
    """Which threads a command acts on: named ids, or filters (all must match)."""

    ids: tuple[str, ...] = ()
    statuses: frozenset[str] = frozenset()
    agent: str | None = None
    older_than: float | None = None
    """Seconds since the thread's last update."""
    everything: bool = False

    def is_empty(self) -> bool:
        """Whether nothing selects threads (a command that deletes then refuses to run)."""
        return not (self.ids or self.statuses or self.agent or self.older_than is not None)

    def matches(self, info: ThreadInfo, now: float) -> bool:
        """Whether `info` is selected."""
        return (
            (not self.ids or info.thread_id in self.ids)
            and (not self.statuses or info.status in self.statuses)
            and (self.agent is None or info.agent == self.agent)
            and (self.older_than is None or now - info.updated > self.older_than)
        )


def select(infos: Iterable[ThreadInfo], selection: Selection, now: float) -> list[ThreadInfo]:
    """Return the selected threads; raise `ThreadsError` naming an id the store lacks."""
    infos = list(infos)
    known = {info.thread_id for info in infos}
    if missing := [t for t in selection.ids if t not in known]:
        raise ThreadsError(f"unknown thread id(s): {', '.join(map(repr, missing))}")
    return [info for info in infos if selection.matches(info, now)]


@dataclass
class Outcome:
    """What a prune or delete did (or, dry, would do), and the running threads it skipped."""

    done: list[ThreadInfo] = field(default_factory=list)
    running: list[str] = field(default_factory=list)


@contextlib.contextmanager
def claimed(store: Threads, thread_id: str, held: Collection[str]) -> Iterator[bool]:
    """Hold `thread_id`'s run lock for the block (yield False if another process holds it).

    Threads in `held` are already this caller's (their lock taken by it).
    """
    if thread_id in held:
        yield True
        return
    if not store.try_claim(thread_id):
        yield False
        return
    try:
        yield True
    finally:
        store.release(thread_id)


def prune_threads(
    store: Threads,
    infos: Iterable[ThreadInfo],
    *,
    channels_of: ChannelsOf,
    dry_run: bool,
    held: Collection[str] = (),
) -> Outcome:
    """Prune each thread to its latest checkpoint, skipping (and naming) running ones.

    `channels_of(agent)` gives the delta channels of an agent's threads
    (`wikireact.agents.channels.agent_channels`).
    """
    outcome = Outcome()
    for info in infos:
        with claimed(store, info.thread_id, held) as mine:
            if not mine:
                outcome.running.append(info.thread_id)
                continue
            if not dry_run:
                store.saver.prune(  # type: ignore[call-arg]
                    [info.thread_id], strategy="keep_latest", channels=channels_of(info.agent)
                )
            outcome.done.append(info)
    return outcome


def delete_threads(
    store: Threads,
    infos: Iterable[ThreadInfo],
    *,
    dry_run: bool,
    before_delete: Callable[[ThreadInfo], None] | None = None,
    held: Collection[str] = (),
) -> Outcome:
    """Delete each thread, skipping (and naming) running ones.

    `before_delete` is called for each thread about to go (e.g. to delete its lessons).
    """
    outcome = Outcome()
    for info in infos:
        with claimed(store, info.thread_id, held) as mine:
            if not mine:
                outcome.running.append(info.thread_id)
                continue
            if not dry_run:
                if before_delete is not None:
                    before_delete(info)
                store.saver.delete_thread(info.thread_id)
                unregister(store, info.thread_id)
            outcome.done.append(info)
    return outcome


@dataclass(frozen=True)
class Policy:
    """A retention policy: per action, the age (seconds) an ended thread must pass."""

    rules: tuple[tuple[Action, float], ...]


def parse_policy(text: str) -> Policy:
    """Parse `WIKIREACT_KEEP` (e.g. `latest:7d,delete:90d`); raise `ConfigurationError`."""
    rules: list[tuple[Action, float]] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        action, _, age = part.partition(":")
        if action not in ("latest", "delete"):
            raise ConfigurationError(
                f"bad {KEEP_ENV} rule {part!r}: use latest[:AGE] or delete:AGE, e.g. latest:7d"
            )
        if action == "delete" and not age:
            raise ConfigurationError(f"bad {KEEP_ENV} rule {part!r}: delete needs an age")
        rules.append((action, parse_duration(age) if age else 0.0))  # type: ignore[arg-type]
    if not rules:
        raise ConfigurationError(f"{KEEP_ENV} is empty: use e.g. latest:7d")
    return Policy(tuple(rules))


def policy_from_env() -> Policy | None:
    """Return the policy `WIKIREACT_KEEP` sets (None when unset)."""
    text = os.environ.get(KEEP_ENV, "").strip()
    return parse_policy(text) if text else None


@dataclass
class PolicyOutcome:
    """What applying a policy did (or, dry, would do)."""

    pruned: list[ThreadInfo] = field(default_factory=list)
    deleted: list[ThreadInfo] = field(default_factory=list)
    running: list[str] = field(default_factory=list)


def apply_policy(
    store: Threads,
    policy: Policy,
    *,
    channels_of: ChannelsOf,
    dry_run: bool = False,
    held: Collection[str] = (),
    only: Collection[str] | None = None,
    now: float | None = None,
) -> PolicyOutcome:
    """Apply `policy` to the store's ended threads (or those of `only`); never to running ones."""
    now = time.time() if now is None else now
    ended = [
        info
        for info in list_threads(store)
        if info.status in ENDED and (only is None or info.thread_id in only)
    ]
    outcome = PolicyOutcome()
    deletes = [age for action, age in policy.rules if action == "delete"]
    if deletes:
        doomed = [info for info in ended if now - info.updated > min(deletes)]
        done = delete_threads(store, doomed, dry_run=dry_run, held=held)
        outcome.deleted, outcome.running = done.done, done.running
        gone = {info.thread_id for info in doomed}
        ended = [info for info in ended if info.thread_id not in gone]
    latest = [age for action, age in policy.rules if action == "latest"]
    if latest:
        due = [info for info in ended if info.checkpoints > 1 and now - info.updated >= min(latest)]
        done = prune_threads(store, due, channels_of=channels_of, dry_run=dry_run, held=held)
        outcome.pruned = done.done
        outcome.running += done.running
    return outcome
