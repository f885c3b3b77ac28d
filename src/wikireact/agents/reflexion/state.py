"""The typed state of a Reflexion run: its input settings, its trials, and ReAct's output keys.

The output has ReAct's keys (`OutputState`: answer, status, steps, trajectory, usage,
audit) summed over the trials, so `ask --json`, display and eval records read it as they
read a ReAct episode, plus `trials` (one record per trial) and `model_calls`. Every step,
usage entry and audit record carries the number of its `trial`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from langgraph.managed import RemainingSteps
from typing_extensions import NotRequired, TypedDict

from wikireact.state import (
    DESCRIBED,
    FULL_VALUE_EVERY,
    AuditRecord,
    OutputState,
    SharedDeltaChannel,
    Status,
    Step,
    StepUsage,
    append_items,
)

MemoryMode = Literal["off", "question"]
"""`off`: lessons live only within the run; `question`: they are also kept in the long-term
store under the question, and a later run on it starts with them."""
Verdict = Literal["correct", "wrong", "no_answer", "accepted", "rejected"]
"""The evaluator's judgement of a trial: `correct`/`wrong` against a gold answer (exact match
after SQuAD normalisation); without one, `accepted` (it gave an answer, and the self-check,
if on, agreed) or `rejected` (the self-check disagreed); `no_answer`: it ended without Finish."""
PASSED: frozenset[str] = frozenset({"correct", "accepted"})
"""Verdicts that end the run with the trial's answer."""
CallKind = Literal["step", "self_check", "reflection"]

DEFAULT_MAX_TRIALS = 3
MAX_TRIALS = 20
"""The most trials one run may take (each is a whole ReAct episode)."""


class TrialStep(Step):
    """A step of one trial (as in ReAct's trajectory), with the trial's number."""

    trial: int


class TrialUsage(StepUsage):
    """One model call's tokens (and a step's Wikipedia requests), with its trial and kind."""

    trial: int
    call: CallKind
    """`step` (a ReAct step), `self_check` or `reflection` (`step` is then the trial's last step)."""


class TrialAudit(AuditRecord):
    """A step's audit record (see `AuditRecord`), with the trial's number."""

    trial: int


@DESCRIBED
class Trial(TypedDict):
    """One trial: the lessons it was shown, what it did, the verdict, the lesson it left."""

    number: int
    lessons: list[str]
    """The lessons its prompt showed (stored ones first, then this run's)."""
    answer: str | None
    status: Status
    """The ReAct episode's status (finished, budget_exhausted, repetition_halted, ...)."""
    steps: int
    trajectory: list[Step]
    """Its ReAct steps: thought, action, observation, kind, raw model text."""
    model_calls: int
    """Its ReAct steps' model calls plus the self-check's (not the reflection's)."""
    verdict: Verdict | None
    """The evaluator's judgement (None until `evaluate` ran)."""
    judged: str
    """Why the verdict, in words (shown to the reflection)."""
    reflection: str | None
    """The lesson written after it failed (None: it passed, or no reflection was made)."""


@DESCRIBED
class ReflexionInput(TypedDict):
    """What a caller provides: the question, and optionally the gold answer and the settings."""

    question: str
    """The question to answer (at most 2,000 characters). One thread holds one run."""
    gold_answer: NotRequired[str | None]
    """The gold answer (evaluation): a trial passes on exact match after SQuAD normalisation.
    Without one a trial passes when it ends with Finish (and the self-check, if on, agrees)."""
    max_trials: NotRequired[int]
    """Trials at most (default 3, at most 20)."""
    memory: NotRequired[MemoryMode]
    """`question` (default when the graph has a store): keep lessons in the long-term store
    under the question and start with its stored ones; `off`: lessons live in this run only."""
    self_check: NotRequired[bool]
    """Without a gold answer, ask the model once per finished trial whether its answer holds
    (default off: a trial then fails only when it ends without Finish)."""


@DESCRIBED
class ReflexionOutput(OutputState):
    """ReAct's output summed over the trials (answer and status: the last trial's), plus the trials."""

    trials: Annotated[
        list[Trial], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """Every trial: lessons shown, trajectory, answer, status, verdict, reflection."""
    model_calls: int
    """Model calls of the whole run: every step, self-check and reflection."""


class ReflexionState(ReflexionInput, ReflexionOutput, total=False):
    """The full state of a Reflexion run (what `get_state` and Studio show)."""

    recalled: list[str]
    """Lessons read from the long-term store when the run started (`memory="question"`)."""
    attempt: Trial
    """The trial being judged and reflected on (appended to `trials` by `record`)."""
    context: dict[str, Any]
    """The run's `Context` as a dict, kept from its start (`wikireact.episode.stored_context`)."""
    cut_episode: str | None
    """The checkpoint namespace of the trial the recursion limit (or the window) cut: the next run continues
    it there (`wikireact.episode.sub_episode`); None when no trial is cut."""
    remaining_steps: RemainingSteps
    """LangGraph's managed count of supersteps left before the recursion limit (not stored)."""
