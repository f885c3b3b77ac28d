"""LATS's own settings, read from its input state (`LatsInput`), checked in one line each.

As Reflexion's, they are input fields, not `Context` fields: they belong to one search of
one question (the gold answer above all), are kept with the thread, and Studio shows them.
The step budget (the tree's depth) is ReAct's `Context.max_steps`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wikireact.agents.lats.state import (
    DEFAULT_CANDIDATES,
    DEFAULT_EXPLORATION,
    DEFAULT_ITERATIONS,
    DEFAULT_MAX_MODEL_CALLS,
)
from wikireact.context import read_flag, read_int
from wikireact.errors import ConfigurationError

MAX_CANDIDATES = 10
MAX_ITERATIONS = 200
DEFAULT_TEMPERATURE = 0.7
SUPERSTEPS_PER_CHILD = 3
"""Supersteps one child may take: act, evaluate, reflect."""


def supersteps_per_iteration(candidates: int) -> int:
    """Return the supersteps after `select` that an iteration may take, up to the search's end.

    expand, each child (act, evaluate, reflect), backprop, the next select, and finish:
    `select` starts an iteration only when its `RemainingSteps` exceeds this, so the last
    node still runs before LangGraph's recursion limit.
    """
    return 4 + SUPERSTEPS_PER_CHILD * candidates


MIN_RECURSION_LIMIT = 2 + supersteps_per_iteration(DEFAULT_CANDIDATES)
"""The smallest `recursion_limit` at which a new search (START, select) runs one iteration of
the default number of candidates and ends resumably (21)."""


@dataclass(frozen=True)
class SearchSettings:
    """A search's settings, checked."""

    candidates: int
    max_iterations: int
    exploration_weight: float
    max_model_calls: int
    self_check: bool
    temperature: float
    gold_answer: str | None


def search_settings(values: Any) -> SearchSettings:
    """Return the settings of a search's input `values`; raise `ConfigurationError` (one line)."""
    candidates = read_int("candidates", values.get("candidates", DEFAULT_CANDIDATES))
    if not 1 <= candidates <= MAX_CANDIDATES:
        raise ConfigurationError(f"candidates must be from 1 to {MAX_CANDIDATES}, got {candidates}")
    iterations = read_int("max_iterations", values.get("max_iterations", DEFAULT_ITERATIONS))
    if not 1 <= iterations <= MAX_ITERATIONS:
        raise ConfigurationError(
            f"max_iterations must be from 1 to {MAX_ITERATIONS}, got {iterations}"
        )
    calls = read_int("max_model_calls", values.get("max_model_calls", DEFAULT_MAX_MODEL_CALLS))
    if calls < 1:
        raise ConfigurationError(f"max_model_calls must be at least 1, got {calls}")
    gold = values.get("gold_answer")
    if gold is not None and not isinstance(gold, str):
        raise ConfigurationError(f"gold_answer must be text, got {gold!r}")
    return SearchSettings(
        candidates=candidates,
        max_iterations=iterations,
        exploration_weight=_number(
            "exploration_weight", values.get("exploration_weight", DEFAULT_EXPLORATION), 0.0, 100.0
        ),
        max_model_calls=calls,
        self_check=read_flag("self_check", values.get("self_check", gold is None)),
        temperature=_number("temperature", values.get("temperature", DEFAULT_TEMPERATURE), 0, 2),
        gold_answer=gold,
    )


def _number(name: str, value: object, low: float, high: float) -> float:
    """Read a number from `low` to `high` given as a number or as text; one line otherwise."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigurationError(f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not low <= number <= high:
        raise ConfigurationError(f"{name} must be from {low:g} to {high:g}, got {value!r}")
    return number
