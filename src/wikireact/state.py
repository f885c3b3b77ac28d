"""The typed state of a ReAct episode, and its input and output schemas.

Channels that grow (`trajectory`, `usage`, `proposals`) or hold large text that
changes rarely or is copied into the history (`page_sentences`, `current`) are
delta channels (`SharedDeltaChannel`): a checkpointer stores each write once and rebuilds
the value by replaying writes, instead of re-storing it in every checkpoint (see
bench/checkpoint_growth.py), and a router's copy of the state shares their values instead of
copying them. Readers see ordinary values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from langgraph.channels import DeltaChannel
from langgraph.managed import RemainingSteps
from pydantic import ConfigDict, with_config
from typing_extensions import NotRequired, Self, TypedDict

from wikireact.protocols.citations import Citation, ShownSentence
from wikireact.protocols.text import ActionName
from wikireact.protocols.tools import ToolCallRecord

Status = Literal[
    "running",
    "finished",
    "budget_exhausted",
    "repetition_halted",
    "recursion_limit",
    "invalid_plan",
    "no_answer",
    "context_exhausted",
]
"""`recursion_limit`: stopped before LangGraph's recursion limit (not ended: a run with a
larger `recursion_limit` continues it). Agents that plan (`wikireact.agents`) may also end
`invalid_plan` (no valid plan after the re-plan) or `no_answer` (their one answering call
gave no `Finish`). `context_exhausted`: the next prompt did not fit the model's context
window even fitted (`wikireact.prompting.fitting`), or the provider refused it as too long (not
ended: a run with a larger window or another model continues it)."""
ProtocolName = Literal["text", "tools"]
"""How the model states its action: `text` (`Action N: Verb[argument]` lines, parsed by us)
or `tools` (native tool calls: search, lookup, finish)."""
FULL_VALUE_EVERY = 16
"""A delta channel stores its full value every this many writes, bounding replay on reads."""
ENDED: frozenset[str] = frozenset(
    {"finished", "budget_exhausted", "repetition_halted", "invalid_plan", "no_answer"}
)
"""Statuses of an ended episode; `invalid_plan` is a planning agent's (two malformed plans),
`no_answer` ReWOO's (a solver reply without Finish)."""
StepKind = Literal["executed", "invalid", "repeat", "finish", "rejected", "plan", "unverified"]
"""What a step was: `executed` (a Search/Lookup ran), `invalid` (format error), `repeat` (the
same action in the same environment state as an earlier step: not executed), `finish`,
`rejected` (a human reviewer refused it: not executed), `plan` (a planning agent's valid
plan, e.g. ReWOO's: its steps follow), or `unverified` (a Finish sent back once by
`verify_finish`: its answer appeared in no observation; see `wikireact.evidence.verify`)."""


DESCRIBED = with_config(ConfigDict(use_attribute_docstrings=True))
"""Puts each field's docstring into the JSON schemas as its description (Studio, servers)."""


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


def append_step_numbers(
    current: dict[str, list[int]], batches: Sequence[dict[str, list[int]]]
) -> dict[str, list[int]]:
    """Reducer for `proposals`: append each batch's step numbers to their key's list."""
    out = dict(current)
    for batch in batches:
        for key, numbers in batch.items():
            out[key] = [*out.get(key, []), *numbers]
    return out


class SharedDeltaChannel(DeltaChannel):
    """A `DeltaChannel` for a reducer that never changes its input in place: copies share the value.

    LangGraph copies every channel each time a conditional edge reads the state
    (`langgraph.pregel._algo.local_read`), and `DeltaChannel.copy` copies the value: a long
    episode's trajectory, usage and audit lists were copied three times a step, and the young
    copies lengthened each of Python's garbage collections (bench/step_length.py). The
    reducers above return a new value and never change the one they are given, so a copy can
    share it: an update replaces the copy's value, and nothing changes a value in place.
    """

    __slots__ = ()

    def copy(self) -> Self:
        """Return a copy holding the same value object (O(1), not a copy of a long list)."""
        new = self.__class__(self.reducer, self.typ, snapshot_frequency=self.snapshot_frequency)
        new.key = self.key
        new.value = self.value
        return new


class ActionDict(TypedDict):
    """A parsed action as stored in state: `Search`, `Lookup` or `Finish` and its argument."""

    name: ActionName
    argument: str


class StructuredAction(TypedDict):
    """An action as data: the verb and its named arguments, e.g. Search with {"title": "Ed Wood"}."""

    verb: ActionName
    arguments: dict[str, str]


Decision = Literal["approved", "edited", "rejected"]


class Approval(TypedDict):
    """A human reviewer's decision on a proposed action (approval mode)."""

    decision: Decision
    by: str | None
    """The reviewer's identity, when the caller gave one (`"by"` in the resume value)."""
    original_action: StructuredAction | None
    """For `edited`: what the model proposed (the step's action is the reviewer's)."""
    note: str | None
    """For `rejected`: the reviewer's reason."""


@DESCRIBED
class AuditRecord(TypedDict):
    """The facts of one step: what was done, what came back, when, at what cost, who allowed it."""

    step: int
    kind: StepKind
    protocol: ProtocolName
    thought: str
    """The model's account of itself (not evidence; kept beside the facts)."""
    action: StructuredAction | None
    """The action as run or proposed; None for an invalid step."""
    attempted: str
    """The action as text (`Search[Ed Wood]`), or what an invalid reply attempted."""
    observation: str
    started_at: str | None
    """UTC time `act` started executing the action (ISO 8601); None when nothing was executed."""
    ended_at: str | None
    wiki_requests: int
    input_tokens: int
    output_tokens: int
    approval: Approval | None
    """The reviewer's decision under approval mode; None otherwise."""
    model_seconds: NotRequired[float]
    """Wall time of the step's model call."""
    wiki_seconds: NotRequired[float]
    """Wall time of the step's Wikipedia call (`ended_at - started_at`; 0 when nothing ran)."""
    cleared: NotRequired[int]
    """Observations the step's prompt sent as a placeholder to fit the model's context window."""


@DESCRIBED
class Step(TypedDict):
    """One completed step of the episode (the history shown to the model)."""

    kind: StepKind
    """What the step was (executed, invalid, repeat, finish, rejected)."""
    thought: str
    """The model's reasoning for this step ('' in the Act-only method)."""
    action: str
    """The action as text, e.g. `Search[Ed Wood]`, or the invalid text that was rejected."""
    observation: str
    """What the environment (or the format checker) answered."""
    raw: str
    """The model's raw output for this step, after cutting any made-up observation."""
    calls: NotRequired[list[ToolCallRecord]]
    """Tools protocol only: the tool calls of the model's reply (to replay the conversation)."""
    shown: NotRequired[list[ShownSentence]]
    """An executed Search/Lookup: the page sentences its observation showed (title, index)."""


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
    kind: StepKind | None
    """Decided by `parse` (invalid, finish, repeat; None: to be executed) and by `act`."""
    state_key: str | None
    """The action in its environment state (see `wikireact.wiki.repetition`); None for Finish/invalid."""
    repeat_of: int | None
    """For a repeat: the earlier step whose result this action already has."""
    observation: str
    """The environment's answer ('' until `act` ran)."""
    input_tokens: int
    output_tokens: int
    wiki_requests: int
    """Requests the action made to the Wikipedia source."""
    calls: list[ToolCallRecord]
    """Tools protocol: the reply's tool calls (empty in the text protocol)."""
    started_at: str | None
    """UTC time `act` started executing (the only node that records times)."""
    ended_at: str | None
    approval: Approval | None
    """The reviewer's decision, written by `act` in approval mode."""
    shown: list[ShownSentence]
    """The page sentences the observation shows (`wikireact.evidence.shown`), written by `act`."""
    cleared: int
    """Observations the step's prompt sent as a placeholder to fit the context (`reason`)."""
    model_seconds: float
    """Wall time of the step's model call (`reason`)."""


EMPTY_STEP = CurrentStep(
    raw="",
    thought="",
    action=None,
    action_text="",
    format_error=None,
    kind=None,
    state_key=None,
    repeat_of=None,
    observation="",
    input_tokens=0,
    output_tokens=0,
    wiki_requests=0,
    calls=[],
    started_at=None,
    ended_at=None,
    approval=None,
    shown=[],
    cleared=0,
    model_seconds=0.0,
)
"""Every field of a step in progress at its empty value (`current` merges partial writes)."""


def new_step(**fields: Any) -> CurrentStep:
    """Return a fresh step in progress: `EMPTY_STEP` with `fields` set (written by `reason`)."""
    return CurrentStep(**{**EMPTY_STEP, **fields})  # type: ignore[typeddict-item]


class StepUsage(TypedDict):
    """Token usage and Wikipedia requests of one step."""

    step: int
    input_tokens: int
    output_tokens: int
    wiki_requests: int
    cleared: NotRequired[int]
    """Observations sent as a placeholder in the step's prompt to fit the context window (the
    wall times of a step are in its audit record: they differ run to run)."""


@DESCRIBED
class InputState(TypedDict):
    """What a caller provides: the question only."""

    question: str
    """The question to answer (at most 2,000 characters). One thread holds one question."""


@DESCRIBED
class OutputState(TypedDict):
    """What a caller gets back (also at an approval pause, where status is `running`)."""

    answer: str | None
    """The Finish argument, or None when the episode ended without one."""
    status: Status
    """running (also while paused), finished, budget_exhausted, repetition_halted, or
    recursion_limit (stopped before LangGraph's recursion limit; resumable)."""
    steps: int
    """Steps completed so far."""
    trajectory: Annotated[
        list[Step], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """The completed steps: thought, action, observation, kind, raw model text."""
    usage: Annotated[
        list[StepUsage], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """Per step: model tokens in and out, and requests to the Wikipedia source."""
    audit: Annotated[
        list[AuditRecord], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """One record of facts per step (see `AuditRecord`); `wikireact history THREAD --json`."""
    model_calls: int
    """Calls made to the model so far (ReAct: one per step); every agent's output has it."""
    citations: list[Citation]
    """Once ended: the sentences the environment showed that the answer rests on (step, page
    title, the page's sentence index, the sentence, the cited span); see `wikireact.evidence`."""
    supported: bool
    """Once ended: whether the shown sentences support the answer (False without an answer)."""
    stop_reason: NotRequired[str | None]
    """Why the episode stopped short of an answer, in one line (`budget_exhausted`: which budget;
    `context_exhausted`: the prompt's tokens and the window); None otherwise."""


@DESCRIBED
class EpisodeInput(InputState, total=False):
    """The input of an episode that another agent runs as one of several (Reflexion's trials).

    The served ReAct graph takes `InputState` (the question only); an agent compiles the
    ReAct graph with this input schema (`wikireact.graph.make_builder(input_schema=...)`).
    """

    lessons: list[str]
    """Lessons from earlier attempts at this question, shown to the model before the question
    (`wikireact.prompting.lessons`); none by default."""


class State(EpisodeInput, OutputState, total=False):
    """The full state of an episode (what `get_state` and Studio show)."""

    page_title: str | None
    """Title of the page opened by the last successful Search; None before or after a miss."""
    page_sentences: Annotated[
        list[str], SharedDeltaChannel(last_write, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """All sentences of the current page (Lookup reads them)."""
    lookup_cursors: dict[str, int]
    """Per lowercased keyword, how many of its matches have been shown so far."""
    page_key: str | None
    """The state key of the Search that opened the current page (a Search naming it again is a repeat)."""
    proposals: Annotated[
        dict[str, list[int]],
        SharedDeltaChannel(append_step_numbers, snapshot_frequency=FULL_VALUE_EVERY),
    ]
    """Per action-in-environment-state key, the steps that proposed it (executed, then repeats)."""
    current: Annotated[
        CurrentStep, SharedDeltaChannel(merge_dicts, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """The step in progress: the model's text, the parsed action, the observation (write partial dicts)."""
    pages_read: Annotated[
        list[str], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """Titles of the pages the episode's Searches opened (as the source resolved them), once each."""
    context: dict[str, Any]
    """The episode's `Context` as a dict, kept from its start (see `wikireact.episode.stored_context`).
    A plain channel, not a delta one: it is small and written once, and a delta channel written
    once is read by walking back to that write, through every checkpoint of the episode."""
    remaining_steps: RemainingSteps
    """LangGraph's managed count of supersteps left before the recursion limit (not stored)."""
