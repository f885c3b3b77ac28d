"""Reflexion's own settings, read from its input state (`ReflexionInput`), checked in one line each.

They are input fields, not `Context` fields: they belong to one run of one question (the
gold answer above all), are kept with the thread, and Studio shows them in the input form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore

from wikireact.agents.reflexion.state import DEFAULT_MAX_TRIALS, MAX_TRIALS, MemoryMode
from wikireact.context import read_flag, read_int
from wikireact.errors import ConfigurationError

MEMORY_MODES: tuple[MemoryMode, ...] = ("off", "question")


@dataclass(frozen=True)
class RunSettings:
    """A run's Reflexion settings, checked."""

    max_trials: int
    memory: MemoryMode
    self_check: bool
    gold_answer: str | None

    @property
    def remembers(self) -> bool:
        """Whether lessons are read from and kept in the long-term store."""
        return self.memory == "question"


def run_settings(values: Any, store: BaseStore | None) -> RunSettings:
    """Return the settings of a run's input `values`; `store`: the graph's long-term store.

    `memory` defaults to `question` when there is a store, else `off`; `question` without a
    store is refused. Raises `ConfigurationError` with one line.
    """
    max_trials = read_int("max_trials", values.get("max_trials", DEFAULT_MAX_TRIALS))
    if not 1 <= max_trials <= MAX_TRIALS:
        raise ConfigurationError(f"max_trials must be from 1 to {MAX_TRIALS}, got {max_trials}")
    memory = values.get("memory") or ("question" if store is not None else "off")
    if memory not in MEMORY_MODES:
        raise ConfigurationError(f"memory must be off or question, got {memory!r}")
    if memory == "question" and store is None:
        raise ConfigurationError(
            "memory=question needs a long-term store: build_graph(store=...) "
            "(wikireact.storage.long_term.open_store), or memory=off"
        )
    gold = values.get("gold_answer")
    if gold is not None and not isinstance(gold, str):
        raise ConfigurationError(f"gold_answer must be text, got {gold!r}")
    return RunSettings(
        max_trials=max_trials,
        memory=memory,
        self_check=read_flag("self_check", values.get("self_check", False)),
        gold_answer=gold,
    )
