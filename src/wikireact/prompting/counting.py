"""A prompt's tokens as the sum of its messages' counts, each message object counted once.

Fitting counts every step's prompt (`wikireact.prompting.fitting`), and a step's prompt
holds every earlier step's turns: counted message by message, a 4,800-step prompt costs
about 9 ms of Python per count, step after step (bench/step_length.py). The turns are the
very same message objects from one step's prompt to the next (`wikireact.prompting.turns`,
and the step turns a fitted prompt rebuilds are cached), so a counter whose count is a sum
over messages (a scripted model's, LangChain's `count_tokens_approximately`) remembers each
message's count by the message's identity: a prompt then costs one lookup per message, in
C, and a count only for the messages it has not seen; a prompt that extends one of the last
counted (the next step's) costs the identity check of that one's messages and the new ones.

Only for counts that add up: a tokenizer run over the whole templated prompt (llama.cpp's)
is not a sum over messages and is not wrapped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from itertools import islice

from langchain_core.messages import BaseMessage

from wikireact.prompting.recent_lists import RecentLists

MESSAGES_KEPT = 20_000
"""Messages whose count a `MessageCounts` keeps (twice a 4,800-step prompt's); past
that the oldest half is forgotten (counted again when next seen)."""

PROMPTS_KEPT = 8
"""Prompts a `MessageCounts` keeps with their count, for the next prompt that extends one."""


class MessageCounts:
    """Counts prompts as the sum of `count_one` over their messages, each message object once."""

    def __init__(
        self, count_one: Callable[[BaseMessage], int], capacity: int = MESSAGES_KEPT
    ) -> None:
        """Count a message with `count_one`; keep the counts of up to `capacity` messages."""
        self.count_one = count_one
        self.capacity = capacity
        self._lock = threading.Lock()
        self._counts: dict[int, int] = {}
        self._kept: dict[int, BaseMessage] = {}
        """The messages counted, held so that no other object takes their `id` meanwhile."""
        self._recent: RecentLists[BaseMessage, int] = RecentLists(PROMPTS_KEPT)

    def __call__(self, messages: Sequence[BaseMessage]) -> int:
        """Return the sum of the messages' counts (each message counted the first time seen).

        A prompt that extends one of the last few counted (the same objects first) costs only
        that check and its new messages' lookups.
        """
        return self._recent.value(
            messages, 0, lambda counted, done: counted + self._sum(messages[done:])
        )

    def _sum(self, messages: Sequence[BaseMessage]) -> int:
        """Return the sum of the messages' counts, looked up by identity (counted when not found)."""
        ids = list(map(id, messages))
        counts = list(map(self._counts.get, ids))
        if None not in counts:
            return sum(counts)  # type: ignore[arg-type]
        with self._lock:
            at = counts.index(None)
            while True:  # only the messages not seen (`index` finds them in C)
                known = self._counts.get(ids[at])
                if known is None:
                    known = self._counts[ids[at]] = self.count_one(messages[at])
                    self._kept[ids[at]] = messages[at]
                counts[at] = known
                try:
                    at = counts.index(None, at + 1)
                except ValueError:
                    break
            if len(self._counts) > self.capacity:
                current = set(ids)  # this prompt's messages stay
                for key in list(islice(self._counts, len(self._counts) // 2)):
                    if key not in current:
                        del self._counts[key], self._kept[key]
        return sum(counts)  # type: ignore[arg-type]
