"""The typed state of a Plan-and-Execute episode, its input and output schemas, and its limits.

The output keeps ReAct's keys (`answer`, `status`, `steps`, `trajectory`, `usage`, `audit`)
so `ask --json`, display, eval records and reports read it unchanged. The ReAct subgraph is
called inside the `execute` node, never added as a node sharing these keys: a subgraph
returning its whole `trajectory` to a parent whose channel appends would add every earlier
step again. `execute` writes only the finished sub-goal's own steps, renumbered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langgraph.managed import RemainingSteps
from typing_extensions import NotRequired, TypedDict

from wikireact.context import read_int
from wikireact.errors import ConfigurationError
from wikireact.protocols.citations import Citation
from wikireact.state import (
    DESCRIBED,
    FULL_VALUE_EVERY,
    AuditRecord,
    SharedDeltaChannel,
    Status,
    Step,
    StepUsage,
    append_items,
)

PlanStatus = Literal[Status, "invalid_plan"]
"""ReAct's statuses, plus `invalid_plan`: two malformed planner (or replanner) replies in a row."""
CallKind = Literal["plan", "replan", "step"]
DEFAULT_MAX_SUBGOALS = 4
"""Sub-goals one episode may run in all (planned and replanned). A HotpotQA question takes two
hops (a bridge entity, then its attribute; or one per compared entity): 2-3 sub-goals, plus
one spare to redo a sub-goal that failed."""
DEFAULT_SUBGOAL_STEPS = 4
"""Step budget of one sub-goal's ReAct episode: a hop is Search, a corrected Search or a
Lookup, another Lookup, Finish. The total budget is `Context.max_steps`, as for ReAct."""
MAX_LIMIT = 100
"""The largest value either limit takes (a plan of more sub-goals is not a plan)."""
PLANNING_ATTEMPTS = 2
"""Replies the planner (and the replanner, each time) gets: a malformed one is retried once."""


class PlanStep(Step):
    """A ReAct step of one sub-goal, as the episode's trajectory keeps it."""

    subgoal: int
    """The sub-goal (1-based, in execution order) whose episode took this step."""


class PlanAuditRecord(AuditRecord):
    """A step's audit record, numbered in the whole episode, with its sub-goal."""

    subgoal: int


class PlanUsage(StepUsage):
    """Tokens and Wikipedia requests of one model call: a planning call or a step's.

    One entry per model call, so `len(usage)` is the episode's model calls and the token
    sums are its tokens. For a planning call, `step` is the number of steps done before it.
    """

    call: CallKind
    subgoal: int | None


@DESCRIBED
class SubgoalResult(TypedDict):
    """What one sub-goal's ReAct episode ended with (what the replanner sees)."""

    number: int
    goal: str
    """The sub-goal as the plan wrote it."""
    question: str
    """The question its ReAct episode answered: the sub-goal with the question and results so far."""
    status: Status
    answer: str | None
    steps: int
    budget: int
    """The step budget it ran with."""
    last_observation: str
    """The last observation of its episode (evidence when it ended without an answer)."""


@DESCRIBED
class PlanRecord(TypedDict):
    """One reply of the planner or replanner, as read."""

    call: CallKind
    raw: str
    """The model's text."""
    subgoals: list[str]
    """The numbered sub-goals it gave (empty for Finish or a malformed reply)."""
    finish: str | None
    """The answer of a `Finish[answer]` reply."""
    error: str | None
    """Why the reply could not be read (an `invalid` outcome), if it could not."""
    after_step: int
    """Steps done before this call."""


@DESCRIBED
class PlanInput(TypedDict):
    """What a caller provides: the question, and optionally the episode's limits."""

    question: str
    """The question to answer (at most 2,000 characters). One thread holds one question."""
    max_subgoals: NotRequired[int]
    """Sub-goals the episode may run in all (default 4)."""
    subgoal_steps: NotRequired[int]
    """Step budget of each sub-goal (default 4); the total is the context's `max_steps`."""


@DESCRIBED
class PlanOutput(TypedDict):
    """What a caller gets back: ReAct's output keys, plus the plan and the sub-goals' results."""

    answer: str | None
    """The replanner's Finish argument, or None when the episode ended without one."""
    status: PlanStatus
    steps: int
    """ReAct steps taken by all sub-goals (the budget `Context.max_steps` counts these)."""
    trajectory: Annotated[
        list[PlanStep], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """Every sub-goal's steps, in order."""
    usage: Annotated[
        list[PlanUsage], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """One entry per model call (planning calls and steps): tokens and Wikipedia requests."""
    audit: Annotated[
        list[PlanAuditRecord], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """One record per step, numbered in the whole episode (see `AuditRecord`)."""
    model_calls: int
    """Model calls so far: planner, replanner and every step of every sub-goal."""
    plan: list[str]
    """The sub-goals still to run, the next one first."""
    subgoals: Annotated[
        list[SubgoalResult], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """The result of each sub-goal run so far."""
    plans: Annotated[
        list[PlanRecord], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """Every planner and replanner reply, as read."""
    citations: list[Citation]
    """Once ended: the shown sentences (of every sub-goal's steps) the answer rests on."""
    supported: bool
    """Once ended: whether the shown sentences support the answer (False without an answer)."""
    stop_reason: NotRequired[str | None]
    """Which budget ended the episode (`budget_exhausted` on calls or tokens); None otherwise."""


class PlanState(PlanInput, PlanOutput, total=False):
    """The full state of a Plan-and-Execute episode."""

    context: dict[str, Any]
    """The episode's `Context` as a dict, kept from its start (`wikireact.episode.stored_context`)."""
    planning_error: str | None
    """Why the last planner/replanner reply was malformed (shown to the model on its retry)."""
    invalid_replies: int
    """Malformed planner/replanner replies in a row."""
    cut_episode: str | None
    """The checkpoint namespace of the sub-goal episode the recursion limit (or the window) cut:
    the next run continues it there (`wikireact.episode.sub_episode`); None when none is cut."""
    remaining_steps: RemainingSteps
    """LangGraph's managed count of supersteps left before the recursion limit (not stored)."""


@dataclass(frozen=True)
class Limits:
    """The episode's limits besides the total step budget (`Context.max_steps`)."""

    max_subgoals: int = DEFAULT_MAX_SUBGOALS
    subgoal_steps: int = DEFAULT_SUBGOAL_STEPS


def read_limits(values: Any) -> Limits:
    """Return the limits an input or state gives (defaults for missing ones).

    Values are read as `Context` reads its numbers (`read_int`: `3` or `"3"`). Raises
    `ConfigurationError` with one line for a value that is not a whole number from 1 to
    `MAX_LIMIT`.
    """
    given = values if isinstance(values, dict) else {}
    found: dict[str, int] = {}
    for name in ("max_subgoals", "subgoal_steps"):
        value = given.get(name)
        if value is None:
            continue
        number = read_int(name, value)
        if not 1 <= number <= MAX_LIMIT:
            raise ConfigurationError(f"{name} must be from 1 to {MAX_LIMIT}, got {number}")
        found[name] = number
    return Limits(**found)
