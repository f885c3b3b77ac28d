"""The typed state of a ReAct episode, and its input and output schemas.

Channels that grow (`trajectory`, `usage`, `action_counts`) or hold large text that
changes rarely or is copied into the history (`page_sentences`, `current`) are
`DeltaChannel`s: a checkpointer stores each write once and rebuilds
the value by replaying writes, instead of re-storing it in every checkpoint (see
bench/checkpoint_growth.py). Readers see ordinary values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from langgraph.channels import DeltaChannel
from typing_extensions import TypedDict

Status = Literal["running", "finished", "budget_exhausted", "repetition_halted"]
SNAPSHOT_EVERY = 16
"""A delta channel stores its full value every this many writes, bounding replay on reads."""
ENDED: frozenset[str] = frozenset({"finished", "budget_exhausted", "repetition_halted"})


def episode_ended(values: dict) -> bool:
    """Whether a thread's values show a finished episode.

    Use this, not `StateSnapshot.next`, to decide whether to resume: after a crash between
    a node's saved writes and the next checkpoint, `next` is empty although the episode
    still runs (`invoke(None, config)` then applies those writes and continues).
    """
    return values.get("status") in ENDED


def append_items(current: list, batches: Sequence[list]) -> list:
    """Reducer for append-only lists: concatenate every written batch."""
    out = list(current)
    for batch in batches:
        out.extend(batch)
    return out


def last_write(current: Any, writes: Sequence[Any]) -> Any:
    """Reducer for a value replaced wholesale: the last write wins."""
    return writes[-1] if writes else current


def merge_dicts(current: dict[str, Any], batches: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Reducer for a record written in parts: later keys win."""
    out = dict(current)
    for batch in batches:
        out.update(batch)
    return out


def add_counts(current: dict[str, int], batches: Sequence[dict[str, int]]) -> dict[str, int]:
    """Reducer for counters: add every written batch of increments."""
    out = dict(current)
    for batch in batches:
        for key, increment in batch.items():
            out[key] = out.get(key, 0) + increment
    return out


class ActionDict(TypedDict):
    """A parsed action as stored in state: `Search`, `Lookup` or `Finish` and its argument."""

    name: Literal["Search", "Lookup", "Finish"]
    argument: str


class Step(TypedDict):
    """One completed step of the episode (the history shown to the model)."""

    thought: str
    """The model's reasoning for this step ('' in the Act-only method)."""
    action: str
    """The action as text, e.g. `Search[Ed Wood]`, or the invalid text that was rejected."""
    observation: str
    """What the environment (or the format checker) answered."""
    raw: str
    """The model's raw output for this step, after cutting any made-up observation."""


class CurrentStep(TypedDict, total=False):
    """The step in progress, filled in by reason, parse and act; `observe` records it."""

    raw: str
    """The model's text (cut at any made-up observation)."""
    thought: str
    """The thought parsed from it ('' in the Act-only method)."""
    action: ActionDict | None
    """The parsed action, or None when the format was invalid."""
    action_text: str
    """The action as text (`Search[Ed Wood]`), or what the model attempted."""
    format_error: str | None
    """Why the output could not be parsed, if it could not."""
    observation: str
    """The environment's answer ('' until `act` ran)."""
    input_tokens: int
    output_tokens: int
    wiki_requests: int
    """Requests the action made to the Wikipedia source."""


class StepUsage(TypedDict):
    """Token usage and Wikipedia requests of one step."""

    step: int
    input_tokens: int
    output_tokens: int
    wiki_requests: int


class InputState(TypedDict):
    """What a caller provides: the question only."""

    question: str


class OutputState(TypedDict):
    """What a caller gets back."""

    answer: str | None
    """The Finish argument, or None when the episode ended without one."""
    status: Status
    steps: int
    trajectory: Annotated[list[Step], DeltaChannel(append_items, snapshot_frequency=SNAPSHOT_EVERY)]
    usage: Annotated[list[StepUsage], DeltaChannel(append_items, snapshot_frequency=SNAPSHOT_EVERY)]


class State(InputState, OutputState, total=False):
    """The full state of an episode (what `get_state` and Studio show)."""

    page_title: str | None
    """Title of the page opened by the last successful Search; None before or after a miss."""
    page_sentences: Annotated[list[str], DeltaChannel(last_write, snapshot_frequency=SNAPSHOT_EVERY)]
    """All sentences of the current page (Lookup reads them)."""
    lookup_cursors: dict[str, int]
    """Per lowercased keyword, how many of its matches have been shown so far."""
    action_counts: Annotated[dict[str, int], DeltaChannel(add_counts, snapshot_frequency=SNAPSHOT_EVERY)]
    """How many times each action (e.g. `Search[Ed Wood]`) has been proposed (write increments)."""
    current: Annotated[CurrentStep, DeltaChannel(merge_dicts, snapshot_frequency=SNAPSHOT_EVERY)]
    """The step in progress: the model's text, the parsed action, the observation (write partial dicts)."""
