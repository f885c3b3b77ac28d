"""The typed state of a LATS search: its input settings, the tree, and ReAct's output keys.

The tree is two channels. `tree` is append-only: one `TreeNode` per ReAct step, with what
the step wrote to ReAct's state (`update`), so a node's whole ReAct state is its path's
updates folded with ReAct's reducers (`tree.py`). `stats` holds what the search learns
about a node (value, visits, reward, reflection); a write replaces one node's record.
Both are delta channels: a checkpoint stores each write once.

The output keeps ReAct's keys (`OutputState`) so `ask --json`, the display and eval
records read a search as they read an episode: `trajectory`, `usage` and `audit` hold
every step of every branch in the order they ran, each tagged with its tree `node`;
`answer` and `status` are the search's. `path` names the branch of the answer.
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
    merge_dicts,
)

StopReason = Literal["solved", "iterations", "calls", "depth", "exhausted", "recursion_limit"]
"""Why the search stopped: a terminal with reward 1 (`solved`); the iteration or model-call
budget; every leaf ended and some at the step budget (`depth`) or none did (`exhausted`);
or the run's recursion limit (`recursion_limit`: resumable with a larger one)."""
CallKind = Literal["expand", "value", "self_check", "reflection"]
Verdict = Literal["correct", "wrong", "no_answer", "accepted", "rejected"]
"""A terminal's judgement, as Reflexion's evaluator gives it (`wikireact.agents.reflexion`)."""


class TreeNode(TypedDict):
    """One node of the search tree: a ReAct step taken from its parent's state (root: none)."""

    id: int
    parent: int | None
    depth: int
    """Steps from the root (the step's number in its branch)."""
    iteration: int
    """The iteration that created it (0: the root)."""
    action: str
    """The step's action as text (`Search[Ed Wood]`), '' for the root."""
    status: Status
    """ReAct's status after the step: `running` for a node the search may expand."""
    update: dict[str, Any]
    """What the step wrote to ReAct's state (act's and observe's writes); {} for the root."""


class NodeStats(TypedDict):
    """What the search knows about a node (written by evaluate, reflect and backprop)."""

    value: float
    """The value function's estimate in [0, 1] (score / 10), or a terminal's reward."""
    score: str
    """The score as the model wrote it ('' for a terminal), e.g. `7` or an unreadable reply."""
    valued: bool
    """Whether the score could be read (an unreadable one is recorded as `LOW_VALUE`)."""
    visits: int
    total: float
    """Sum of the rewards backpropagated through the node."""
    reward: float | None
    """A terminal's reward (1: correct or accepted); None for a non-terminal."""
    verdict: Verdict | None
    judged: str
    """Why the verdict, in words (what the reflection is told)."""
    reflection: str | None
    """The lesson written after a failed terminal."""


class Candidate(TypedDict):
    """A candidate next step proposed by the expansion (its text is parsed by ReAct's parser)."""

    raw: str


class LatsStep(Step):
    """A step of one branch (as in ReAct's trajectory), with its tree node."""

    node: int
    parent: int


class LatsUsage(StepUsage):
    """One model call's tokens, or one step's Wikipedia requests, with its node and kind."""

    node: int
    call: CallKind | Literal["step"]


class LatsAudit(AuditRecord):
    """A step's audit record, with its tree node."""

    node: int


DEFAULT_CANDIDATES = 5
DEFAULT_ITERATIONS = 10
"""Iterations by default (the paper's HotpotQA runs use 30; fewer offline)."""
DEFAULT_EXPLORATION = 1.0
DEFAULT_MAX_MODEL_CALLS = 200


@DESCRIBED
class LatsInput(TypedDict):
    """What a caller provides: the question, and optionally the gold answer and the settings."""

    question: str
    """The question to answer (at most 2,000 characters). One thread holds one search."""
    gold_answer: NotRequired[str | None]
    """The gold answer (evaluation): a terminal's reward is exact match after SQuAD
    normalisation. Without one a terminal that ends with Finish is accepted when the
    self-check call agrees (`self_check`)."""
    candidates: NotRequired[int]
    """Children of each expansion (default 5, from 1 to 10)."""
    max_iterations: NotRequired[int]
    """Iterations at most (default 10; the paper uses 30)."""
    exploration_weight: NotRequired[float]
    """UCT's exploration weight (default 1.0)."""
    max_model_calls: NotRequired[int]
    """Model calls at most, checked before each iteration (default 200)."""
    self_check: NotRequired[bool]
    """Without a gold answer, ask the model whether a terminal's answer holds (default on:
    without it the first Finish ends the search)."""
    temperature: NotRequired[float]
    """Sampling temperature of the candidates of a model that samples (default 0.7)."""


@DESCRIBED
class LatsOutput(OutputState):
    """ReAct's output over the whole search, plus the tree and why the search stopped."""

    tree: Annotated[
        list[TreeNode], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """Every node of the search tree (node 0: the root, the question alone)."""
    stats: Annotated[
        dict[str, NodeStats], SharedDeltaChannel(merge_dicts, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """Per node id (as text): value, visits, reward, verdict, reflection."""
    model_calls: int
    """Model calls of the search: expansions, values, self-checks and reflections."""
    iteration: int
    """Iterations begun."""
    stopped_by: StopReason | None
    path: list[int]
    """The node ids of the answer's branch, root first ([] without an answer)."""


class LatsState(LatsInput, LatsOutput, total=False):
    """The full state of a search (what `get_state` and Studio show)."""

    selected: int
    """The leaf being expanded in this iteration."""
    candidates_found: list[Candidate]
    """The current expansion's candidate steps (acted on in order)."""
    acted: int
    """How many of them have become children."""
    reflections: Annotated[
        list[str], SharedDeltaChannel(append_items, snapshot_frequency=FULL_VALUE_EVERY)
    ]
    """Lessons written after failed terminals (shown to later expansion and value prompts)."""
    context: dict[str, Any]
    """The run's `Context` as a dict, kept from its start (`wikireact.episode.stored_context`)."""
    remaining_steps: RemainingSteps
