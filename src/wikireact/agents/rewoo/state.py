"""The typed state of a ReWOO episode, its input and output schemas, and what flows between nodes.

The output keeps ReAct's keys (`wikireact.state.OutputState`: answer, status, steps,
trajectory, usage, audit) so `ask --json`, the display, eval records and reports read a
ReWOO episode as they read a ReAct one; it adds the plan, the evidence and the count of
model calls. The trajectory holds, in the order they were recorded: each plan the planner
wrote (kind `plan`, or `invalid`), each plan step (`executed`, `repeat`, `rejected` or
`invalid`) and the solver's answer (`finish`, or `invalid`).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.managed import RemainingSteps
from typing_extensions import NotRequired, TypedDict

from wikireact.protocols.citations import ShownSentence
from wikireact.state import (
    DESCRIBED,
    FULL_VALUE_EVERY,
    Approval,
    InputState,
    OutputState,
    SharedDeltaChannel,
    StepKind,
    merge_dicts,
)


class PlannedStep(TypedDict):
    """A plan step as stored in state (see `wikireact.agents.rewoo.plan.PlanStep`)."""

    number: int
    tool: str
    """Search, Lookup or LLM."""
    text: str
    """The input as written, `#E<k>` references included."""
    thought: str
    """The `Plan:` reasoning above the step."""
    needs: list[int]
    """Evidence numbers the step waits for (cited ones, and a Lookup's Search)."""
    page_of: int | None
    """For a Lookup: the Search step whose page it reads."""


class StepResult(TypedDict):
    """What a worker (or the scheduler, for a step it settles itself) found for one plan step."""

    kind: StepKind
    action: str
    """The action run, after `#E` substitution (the reviewer's if edited), e.g. `Search[Ed Wood]`."""
    evidence: str
    """The step's evidence, capped like an observation (what `#E<n>` stands for)."""
    page_title: str | None
    """For a Search: the page it opened (None after a miss)."""
    sentences: list[str]
    """For a Search: the sentences of the page it opened (Lookups read them)."""
    cursors: dict[str, int]
    """For a Lookup: the page's cursors after it."""
    state_key: str | None
    input_tokens: int
    output_tokens: int
    wiki_requests: int
    started_at: str | None
    ended_at: str | None
    approval: Approval | None
    model_seconds: NotRequired[float]
    """For an LLM step: the wall time of its model call (its `started_at`/`ended_at` stay None:
    they time a Wikipedia call)."""
    shown: NotRequired[list[ShownSentence]]
    """For a Search/Lookup that ran: the page sentences its evidence shows (`wikireact.evidence`)."""
    stop_reason: NotRequired[str]
    """For an LLM step whose prompt could not fit the model's window: why. Not recorded; the
    episode stops `context_exhausted` and a later run sends the step again."""


class Task(TypedDict):
    """One step sent to a worker (`Send("work", task)`): everything it needs, nothing shared."""

    number: int
    tool: str
    argument: str
    """The input with every `#E<k>` substituted."""
    thought: str
    question: str
    context: dict[str, Any]
    """The episode's kept settings (`wikireact.episode.stored_context`)."""
    call_index: int
    """The model call's index in the episode (an LLM step), for scripted and cached models."""
    state_key: str | None
    page_title: NotRequired[str | None]
    sentences: NotRequired[list[str]]
    cursors: NotRequired[dict[str, int]]
    step: int
    """The step number the approval prompt shows."""


@DESCRIBED
class RewooOutput(OutputState):
    """What a caller gets back: ReAct's output keys, plus the plan and its evidence."""

    plan: list[PlannedStep]
    """The plan being run (the last one the planner wrote)."""
    evidence: Annotated[dict[str, str], SharedDeltaChannel(merge_dicts)]
    """Per evidence name (`#E1`), what its step found, capped like an observation."""
    model_calls: Annotated[int, operator.add]
    """Model calls so far: planner, LLM steps and solver (2 when the plan has no LLM step)."""


class RewooState(InputState, RewooOutput, total=False):
    """The full state of a ReWOO episode (what `get_state` and Studio show)."""

    plans: int
    """Plans written so far (at most 2: one re-plan after an invalid one)."""
    plan_error: str | None
    """Why the last plan was invalid (shown to the planner when it plans again)."""
    results: Annotated[
        dict[str, StepResult], SharedDeltaChannel(merge_dicts, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """Per evidence name, the result of its step (workers write them; the scheduler records them)."""
    recorded: list[int]
    """Evidence numbers whose steps are in the trajectory."""
    dispatched: list[int]
    """Evidence numbers sent to workers (or settled by the scheduler)."""
    round: list[Task]
    """The steps the scheduler sends to workers next."""
    cursors: dict[str, dict[str, int]]
    """Per Search step (`#E1`), the Lookup cursors of its page."""
    proposals: dict[str, list[int]]
    """Per action-in-environment-state key, the evidence numbers that proposed it."""
    pages_read: list[str]
    """Titles of the pages the plan's Searches opened, once each."""
    context: dict[str, Any]
    """The episode's `Context` as a dict, kept from its start."""
    remaining_steps: RemainingSteps
    """LangGraph's supersteps left in this run (`limits`: ReWOO stops before the limit)."""
