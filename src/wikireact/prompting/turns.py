"""An episode's prompt turns, extended step by step instead of rebuilt for every step.

The prompt of step N holds the turns of the N-1 steps before it, so building it from the
history each time costs the square of the episode's length over an episode. Within a run
LangGraph hands `reason` the same step objects every time (the trajectory only grows), so
`EpisodeTurns` keeps the turns built for an episode's last prompts and, when the next
history continues one (the same step objects: `wikireact.prompting.recent_lists.KeptList`),
builds only the new steps' turns. A history that differs from a kept one in some steps (a
fitted prompt whose plan changed, `wikireact.prompting.fitting`: a block of early observations
newly cleared) builds only those steps' turns and reuses the rest. A history whose first step
is another object (a resumed run, a fork) is built in full.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from wikireact.prompting.recent_lists import KeptList
from wikireact.state import Step

EPISODES_KEPT = 64
"""Episodes (e.g. the threads of an evaluation) whose latest turns are kept."""
HISTORIES_KEPT = 4
"""Histories kept per episode: its whole history, and the fitted ones a full window sends
(`wikireact.prompting.fitting`: the previous step's plan and the block on either side of it)."""


@dataclass(frozen=True, eq=False)
class _Built:
    """A history's turns as built: its steps, their turns, and where each step's turns end.

    Kept as `KeptList`s: the next step's history shares their pieces (a whole copy a step of a
    long episode's steps and turns cost copying, freeing and garbage-collecting them).
    """

    steps: KeptList[Step]
    turns: KeptList[BaseMessage]
    ends: array[int]


class EpisodeTurns:
    """The turns of recent episodes' histories, each extended by the steps added since."""

    def __init__(self, capacity: int = EPISODES_KEPT, histories: int = HISTORIES_KEPT) -> None:
        """Keep the turns of up to `capacity` episodes (least recently used go first), `histories` each."""
        self.capacity = capacity
        self.histories = histories
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[Hashable, int], list[_Built]] = OrderedDict()

    def turns(
        self,
        key: Hashable,
        steps: Sequence[Step],
        step_turns: Callable[[int, Step], Sequence[BaseMessage]],
        *,
        self_contained: bool = True,
    ) -> KeptList[BaseMessage]:
        """Return the turns of `steps` (`step_turns(number, step)` each, numbered from 1), in order.

        `key` names the prompt's form (protocol, question, method); an episode is told apart
        by its first step object, which the kept entries hold on to. When `steps` continues a
        kept history, only the steps after it are built; otherwise the turns of every step a
        kept history has at the same place (the same or an equal step) are reused.
        `self_contained=False`: a step's turns depend on the steps before it too (the small
        model's prompt shows a repeated action's earlier result), so only those before the
        first differing step are reused.
        """
        if not steps:
            return KeptList()
        episode = (key, id(steps[0]))
        with self._lock:
            kept = list(self._kept.get(episode, ()))
        base = next((built for built in reversed(kept) if built.steps.starts(steps)), None)
        if base is not None:  # a kept history `steps` continues whole: the common case
            built = _extended(base, steps, step_turns)
        else:
            built = _rebuilt(kept, steps, step_turns, self_contained)
        with self._lock:
            entries = self._kept.setdefault(episode, [])
            if base is not None:  # extended: the longer one replaces it
                entries[:] = [entry for entry in entries if entry is not base]
            entries.append(built)
            del entries[: -self.histories]
            self._kept.move_to_end(episode)
            while len(self._kept) > self.capacity:
                self._kept.popitem(last=False)
        return built.turns


def _extended(
    base: _Built, steps: Sequence[Step], step_turns: Callable[[int, Step], Sequence[BaseMessage]]
) -> _Built:
    """Return `base` extended by the steps of `steps` after it (`steps` starts with its steps)."""
    done, turns, ends = len(base.steps), list[BaseMessage](), array("q", base.ends)
    for number, step in enumerate(steps[done:], start=done + 1):
        turns += step_turns(number, step)
        ends.append(len(base.turns) + len(turns))
    return _Built(base.steps.renewed(steps), base.turns.plus(turns), ends)


def _rebuilt(
    kept: Sequence[_Built],
    steps: Sequence[Step],
    step_turns: Callable[[int, Step], Sequence[BaseMessage]],
    self_contained: bool,
) -> _Built:
    """Return the turns of `steps`, reusing a kept history's for each step it has at the same place.

    A self-contained step's turns depend only on the step and its number, so a step that is
    the same object (or an equal one) at the same place has the same turns. The kept history
    with the most such steps lends its turns; only the other steps are built (a fitted prompt
    whose plan changed: the newly cleared observations, however early they are).
    """
    same: list[bool] = []
    base = None
    for built in kept:
        shared = [old is new or old == new for old, new in zip(built.steps, steps, strict=False)]
        if not self_contained:  # reusable only up to the first step that differs
            del shared[_next_false(shared, 0) :]
        if sum(shared) > sum(same):
            base, same = built, shared
    lent = list(base.turns) if base is not None else []
    turns: list[BaseMessage] = []
    ends = array("q")  # not a container the garbage collector goes over
    number = 0
    while number < len(steps):
        if number < len(same) and same[number] and base is not None:
            stop = _next_false(same, number)
            first = base.ends[number - 1] if number else 0
            shift = len(turns) - first
            turns += lent[first : base.ends[stop - 1]]
            run = base.ends[number:stop]
            ends += run if not shift else array("q", (end + shift for end in run))
            number = stop
        else:
            turns += step_turns(number + 1, steps[number])
            ends.append(len(turns))
            number += 1
    return _Built(KeptList(steps), KeptList(turns), ends)


def _next_false(flags: list[bool], start: int) -> int:
    """Return the index of the first False in `flags` from `start` on (`len(flags)`: none)."""
    try:
        return flags.index(False, start)
    except ValueError:
        return len(flags)


EPISODE_TURNS = EpisodeTurns()
"""The one shared by the prompt builders (`wikireact.prompting.react`, `wikireact.prompting.tools`)."""
