"""An episode's prompt turns, extended step by step instead of rebuilt for every step.

The prompt of step N holds the turns of the N-1 steps before it, so building it from the
history each time costs the square of the episode's length over an episode. Within a run
LangGraph hands `reason` the same step objects every time (the trajectory only grows), so
`EpisodeTurns` keeps the turns built for an episode's last prompts and, when the next
history continues one (the same step objects: `wikireact.prompting.recent_lists.starts_with`),
builds only the new steps' turns; a history that shares only its first steps with one (a fitted prompt
whose plan changed, `wikireact.prompting.fitting`) reuses those steps' turns. Any other
history (a resumed run, a fork, an edited step) is built in full.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from wikireact.prompting.recent_lists import starts_with
from wikireact.state import Step

EPISODES_KEPT = 64
"""Episodes (e.g. the threads of an evaluation) whose latest turns are kept."""
HISTORIES_KEPT = 4
"""Histories kept per episode: its whole history, and the fitted ones a full window sends
(`wikireact.prompting.fitting`: the previous step's plan and the block on either side of it)."""


@dataclass(frozen=True, eq=False)
class _Built:
    """A history's turns as built: its steps, their turns, and where each step's turns end."""

    steps: list[Step]
    turns: tuple[BaseMessage, ...]
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
    ) -> tuple[BaseMessage, ...]:
        """Return the turns of `steps` (`step_turns(number, step)` each, numbered from 1).

        `key` names the prompt's form (protocol, question, method); an episode is told apart
        by its first step object, which the kept entries hold on to. The turns of the longest
        run of leading steps a kept history shares with `steps` (the very same objects) are
        reused; only the steps after it are built.
        """
        if not steps:
            return ()
        episode = (key, id(steps[0]))
        with self._lock:
            kept = list(self._kept.get(episode, ()))
        base, done = None, 0
        for built in reversed(kept):  # a history `steps` continues whole: the common case
            if starts_with(steps, built.steps):
                base, done = built, len(built.steps)
                break
        if base is None and kept:  # else the latest one, as far as it matches
            base = kept[-1]
            for old, new in zip(base.steps, steps, strict=False):
                if old is not new:
                    break
                done += 1
        turns: list[BaseMessage] = []
        ends = array("q")  # not a container the garbage collector goes over
        if base is not None and done:
            whole = done == len(base.steps)
            turns = list(base.turns) if whole else list(base.turns[: base.ends[done - 1]])
            ends = array("q", base.ends) if whole else base.ends[:done]
        for number, step in enumerate(steps[done:], start=done + 1):
            turns += step_turns(number, step)
            ends.append(len(turns))
        built = _Built(list(steps), tuple(turns), ends)
        with self._lock:
            entries = self._kept.setdefault(episode, [])
            if base is not None and done == len(base.steps):  # extended: the longer one replaces it
                entries[:] = [entry for entry in entries if entry is not base]
            entries.append(built)
            del entries[: -self.histories]
            self._kept.move_to_end(episode)
            while len(self._kept) > self.capacity:
                self._kept.popitem(last=False)
        return built.turns


EPISODE_TURNS = EpisodeTurns()
"""The one shared by the prompt builders (`wikireact.prompting.react`, `wikireact.prompting.tools`)."""
