"""Fit a prompt into the model's context window; the episode's state is never touched.

Every agent builds its prompt through `fit_prompt` (ReAct's `reason`, both protocols;
the episodes Plan-and-Execute and Reflexion run are ReAct episodes). When the whole prompt
does not fit `ContextBudget.limit` (`wikireact.models.context_window`), the prompt is
built again with, in this order, until it fits:

1. the oldest observations replaced by a one-line placeholder (`cleared_observation`:
   what was there and how to get it back), keeping the latest `keep_latest` in full;
2. fewer extras: the few-shot exemplars first (from the last), then the oldest lessons;
3. the latest observations cleared too, all but the very last;
4. the oldest steps left out whole, replaced by one line (a window too small for every
   Thought and Action of a long episode).

The question and the latest step with its observation are always sent. A prompt
that still does not fit raises `ContextExhaustedError` (the episode ends
`context_exhausted`, resumable with a larger window or another model). A prompt that
fits whole is counted once; otherwise each stage looks for the least change that fits by
bisection, the first from where the previous step's prompt was, so once the window is
full a step costs about three counts.

Observations are cleared, and the oldest steps dropped, `CLEAR_BLOCK` at a time (the least
count that fits, rounded up),
so that once the window is full the prompt's beginning stays the same for several steps
and each new step only appends: llama.cpp reuses its evaluated prefix (and providers
their prompt caches), where clearing one more observation every step would change the
prompt near its start and have all of it read again, step after step.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice

from langchain_core.messages import BaseMessage

from wikireact.context import DEFAULT_KEEP_OBSERVATIONS
from wikireact.errors import ContextExhaustedError
from wikireact.prompting.budget import ContextBudget
from wikireact.prompting.recent_lists import RecentLists
from wikireact.state import Step
from wikireact.wiki.sentences import split_sentences

CLEAR_BLOCK = 8
"""Observations cleared at a time once the window is full (the prompt prefix then holds)."""

PLACEHOLDERS_CACHED = 20_000
"""Observations whose placeholder is kept computed: a long episode's prompt is fitted every
step, over the same earlier observations."""

_CLEARED_STEPS: dict[int, tuple[Step, Step]] = {}
"""By a step's id: the step and its cleared form (`_cleared_step`)."""
_CLEARED_LOCK = threading.Lock()
_CLEARABLE: RecentLists[Step, list[int]] = RecentLists(8)
"""The last histories `clearable_steps` was asked about, with its answers."""

Builder = Callable[["Plan"], list[BaseMessage]]
"""Builds the prompt a `Plan` describes."""


@dataclass(frozen=True)
class Plan:
    """What a fitted prompt leaves out."""

    cleared: int = 0
    """Oldest clearable items (observations, evidence) sent as a placeholder."""
    trimmed: int = 0
    """Extras (exemplars from the last, then the oldest lessons) left out."""
    dropped: int = 0
    """Oldest steps left out whole, replaced by one line saying so."""


@dataclass(frozen=True)
class Fitted:
    """A prompt as sent, and what fitting it changed."""

    messages: list[BaseMessage]
    tokens: int | None
    """Its tokens as the budget counts them (None: the model's window is unknown, nothing fitted)."""
    plan: Plan

    @property
    def cleared(self) -> int:
        """Observations not sent in full (cleared or in a dropped step)."""
        return self.plan.cleared


def fit_prompt(
    build: Builder,
    budget: ContextBudget | None,
    *,
    items: int | Callable[[], int],
    extras: int,
    steps: int = 0,
    keep_latest: int = DEFAULT_KEEP_OBSERVATIONS,
    cleared_before: int = 0,
) -> Fitted:
    """Return the prompt `build(plan)` makes with the least change that fits `budget`.

    `items` is how many clearable items (oldest first) the prompt holds (or a function
    returning it, called only when the whole prompt does not fit), `extras` how many
    extras it may leave out, `steps` how many steps it shows (all but the latest may be
    dropped, after everything else). Raises `ContextExhaustedError` when even the smallest
    prompt is over the limit.

    A prompt that fits whole costs one build and one count: the stages below search only
    when it does not (each step of a long episode would otherwise build and count its prompt
    a dozen times over). `cleared_before`: the items the previous step's prompt cleared; the
    first stage's search starts there, so once the window is full a step costs about two
    more builds and counts (the same plan as a search from scratch would find).
    """
    full = build(Plan())
    if budget is None:
        return Fitted(full, None, Plan())
    whole = budget.count(full)
    if whole <= budget.limit:
        return Fitted(full, whole, Plan())
    built: dict[Plan, tuple[list[BaseMessage], int]] = {Plan(): (full, whole)}
    count = items() if callable(items) else items

    def prompt(plan: Plan) -> tuple[list[BaseMessage], int]:
        if plan not in built:
            messages = build(plan)
            built[plan] = (messages, budget.count(messages))
        return built[plan]

    def tokens(plan: Plan) -> int:
        return prompt(plan)[1]

    def fits(plan: Plan) -> bool:
        return tokens(plan) <= budget.limit

    older, last = max(count - keep_latest, 0), max(count - 1, 0)
    stages: list[Callable[[int], Plan]] = [
        lambda n: Plan(cleared=n),
        lambda n: Plan(cleared=older, trimmed=n),
        lambda n: Plan(cleared=n, trimmed=extras),
        lambda n: Plan(cleared=last, trimmed=extras, dropped=n),
    ]
    ranges = [(0, older), (0, extras), (older, last), (0, max(steps - 1, 0))]
    in_blocks = (True, False, False, True)  # clearing the oldest observations, dropping steps
    starts = (cleared_before or None, None, None, None)
    for stage, (low, high), blocks, start in zip(stages, ranges, in_blocks, starts, strict=True):

        def fits_stage(n: int, stage: Callable[[int], Plan] = stage) -> bool:
            return fits(stage(n))

        found = (
            _least_in_blocks(low, high, fits_stage, start)
            if blocks
            else _least(low, high, fits_stage)
        )
        if found is not None:
            plan = stage(found)
            return Fitted(*prompt(plan), plan)
    smallest = stages[-1](ranges[-1][1])
    raise ContextExhaustedError(tokens(smallest), budget.limit, budget.window)


def _least(
    low: int, high: int, fits: Callable[[int], bool], start: int | None = None
) -> int | None:
    """Return the least n in [low, high] with `fits(n)` (assumed monotone), or None.

    `start` (in the range): where the answer probably is; the search gallops from there
    (two tries when it is right or one off) instead of bisecting the whole range.
    """
    if high < low:
        return None
    if start is not None and low <= start <= high:
        if fits(start):
            high, stride = start, 1
            while start - stride >= low and fits(start - stride):
                high, stride = start - stride, stride * 2
            low = max(low, start - stride + 1)
        else:
            low, stride = start + 1, 1
            while True:
                probe = min(start + stride, high)
                if fits(probe):
                    high = probe
                    break
                if probe == high:
                    return None
                low, stride = probe + 1, stride * 2
    elif not fits(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if fits(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _least_in_blocks(
    low: int, high: int, fits: Callable[[int], bool], start: int | None
) -> int | None:
    """Return the least n in [low, high] with `fits(n)`, rounded up to `CLEAR_BLOCK` (at most `high`).

    Only multiples of the block (and `high`) are tried: the same answer, in fewer counts.
    """
    if high < low:
        return None

    def at(block: int) -> int:
        return min(block * CLEAR_BLOCK, high)

    first, last = -(-low // CLEAR_BLOCK), -(-high // CLEAR_BLOCK)
    begin = None if start is None else -(-start // CLEAR_BLOCK)
    found = _least(first, last, lambda block: fits(at(block)), begin)
    return None if found is None else at(found)


def clearable_steps(history: Sequence[Step]) -> list[int]:
    """Return the indices of the steps whose observation a prompt may clear.

    Those whose observation is at least twice as long as its placeholder: a short one (a
    search miss with its similar titles, a one-sentence Lookup) costs little more than the
    line that would replace it, so clearing it would free little and still change the prompt.

    A history that extends one of the last few asked about (the very same step objects
    first: the next step of a fitted episode) is looked at only from where that one ended.
    """
    out = _CLEARABLE.value(
        history,
        [],
        lambda known, done: (
            known
            + [
                i
                for i, step in enumerate(history[done:], start=done)
                if step["observation"] and _clearable(step["action"], step["observation"])
            ]
        ),
    )
    return list(out)


def fitted_history(
    history: Sequence[Step], plan: Plan, clearable: Sequence[int] | None = None
) -> Sequence[Step]:
    """Return `history` as `plan` shows it (oldest observations cleared, oldest steps dropped).

    The oldest `plan.cleared` observations become placeholders, the oldest `plan.dropped`
    steps one line. `clearable`: `clearable_steps(history)` when the caller has it already
    (a fit builds several plans of one history).

    Steps left as they are are the very same objects, and so is a cleared step each time it is
    cleared (the prompt builders reuse their turns).
    """
    if not plan.cleared and not plan.dropped:
        return history
    if clearable is None:
        clearable = clearable_steps(history)
    shown = list(history)
    for i in clearable[: plan.cleared]:
        shown[i] = _cleared_step(history[i])
    if not plan.dropped:
        return shown
    return [_dropped_note(plan.dropped), *shown[plan.dropped :]]


def _cleared_step(step: Step) -> Step:
    """Return `step` with its observation cleared: the same object for the same step each time.

    So that the fitted histories of consecutive steps share their step objects and their
    prompt turns are extended, not rebuilt (`wikireact.prompting.turns`).
    """
    found = _CLEARED_STEPS.get(id(step))
    if found is not None and found[0] is step:
        return found[1]
    cleared = Step(**{**step, "observation": cleared_observation(step)})
    with _CLEARED_LOCK:
        _CLEARED_STEPS[id(step)] = (step, cleared)  # holds `step`: its id stays its own
        if len(_CLEARED_STEPS) > PLACEHOLDERS_CACHED:
            for key in list(islice(_CLEARED_STEPS, len(_CLEARED_STEPS) // 2)):
                del _CLEARED_STEPS[key]
    return cleared


@functools.lru_cache(maxsize=64)
def _dropped_note(dropped: int) -> Step:
    """Return the line that stands for the oldest `dropped` steps (one object per count)."""
    return Step(
        kind="executed",
        thought="",
        action="(earlier steps)",
        observation=f"[steps 1-{dropped} cleared to fit the context; the steps below "
        "are numbered from 2 on]",
        raw="",
    )


def cleared_observation(step: Step) -> str:
    """Return the placeholder sent instead of a step's observation: what it was, how to reread it."""
    return _placeholder(step["action"], step["observation"])


@functools.lru_cache(maxsize=PLACEHOLDERS_CACHED)
def _clearable(action: str, observation: str) -> bool:
    """Whether an observation is at least twice as long as its placeholder (computed once)."""
    return 2 * len(_placeholder(action, observation)) <= len(observation)


@functools.lru_cache(maxsize=PLACEHOLDERS_CACHED)
def _placeholder(action: str, observation: str) -> str:
    """`cleared_observation` of a step with this action and observation (split into sentences once)."""
    count = len(split_sentences(observation)) or 1
    sentences = f"{count} sentence{'s' if count != 1 else ''}"
    if action.startswith("Search["):
        again = "Search it again to reread"
    elif action.startswith("Lookup["):
        again = "Search its page and Lookup again to reread"
    else:
        again = "it was the answer to that action"
    return f"[cleared to fit the context: {action}, {sentences}; {again}]"
