"""An episode's prompt turns, extended step by step instead of rebuilt for every step.

The prompt of step N holds the turns of the N-1 steps before it, so building it from the
history each time costs the square of the episode's length over an episode. Within a run
LangGraph hands `reason` the same step objects every time (the trajectory only grows), so
`EpisodeTurns` keeps the turns built for an episode's last prompt and, when the next
history continues it (the very same step objects, checked one by one), builds only the
new steps' turns. Any other history (a resumed run, a fork, an edited step) is built in
full.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

from langchain_core.messages import BaseMessage

from wikireact.state import Step

EPISODES_KEPT = 64
"""Episodes (e.g. the threads of an evaluation) whose latest turns are kept."""


class EpisodeTurns:
    """The turns of recent episodes' histories, each extended by the steps added since."""

    def __init__(self, capacity: int = EPISODES_KEPT) -> None:
        """Keep the turns of up to `capacity` episodes (least recently used go first)."""
        self.capacity = capacity
        self._lock = threading.Lock()
        self._kept: OrderedDict[
            tuple[Hashable, int], tuple[list[Step], tuple[BaseMessage, ...]]
        ] = OrderedDict()

    def turns(
        self,
        key: Hashable,
        steps: Sequence[Step],
        step_turns: Callable[[int, Step], Sequence[BaseMessage]],
    ) -> tuple[BaseMessage, ...]:
        """Return the turns of `steps` (`step_turns(number, step)` each, numbered from 1).

        `key` names the prompt's form (protocol, question, method); an episode is told apart
        by its first step object, which the kept entry holds on to.
        """
        if not steps:
            return ()
        episode = (key, id(steps[0]))
        with self._lock:
            kept = self._kept.get(episode)
        done, turns = 0, []
        if kept is not None and len(kept[0]) <= len(steps):
            if all(map(operator.is_, kept[0], steps)):
                done, turns = len(kept[0]), list(kept[1])
        for number, step in enumerate(steps[done:], start=done + 1):
            turns += step_turns(number, step)
        built = tuple(turns)
        with self._lock:
            self._kept[episode] = (list(steps), built)
            self._kept.move_to_end(episode)
            while len(self._kept) > self.capacity:
                self._kept.popitem(last=False)
        return built


EPISODE_TURNS = EpisodeTurns()
"""The one shared by the prompt builders (`wikireact.prompting.react`, `wikireact.prompting.tools`)."""
