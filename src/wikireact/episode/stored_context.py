"""The settings an episode keeps (its `Context`), and which of them a later run may change.

An episode's settings are stored in its state (`context`) when it starts, so a resume
without a context (`graph.invoke(None, config)`, another process, another environment)
runs with them, approval gate included. A later run's context changes only the fields it
gives (a dict's keys, a `Context`'s constructor arguments, a foreign object's fields of
the same names):

- `APPLIED` fields are taken and kept from then on, as the CLI's `resume --max-steps`,
  `--approve`, `--model` and `--wiki` do: they steer the steps still to come.
- `FIXED` fields define what the episode's steps mean (the protocol, method and task shape
  the history the model reads; the repetition limit and observation cap are its rules): a
  different value is refused with one line, and nothing runs. Start a new thread instead.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from wikireact.context import FIELD_NAMES, Context
from wikireact.episode.budgets import exceeded
from wikireact.errors import ConfigurationError
from wikireact.state import State

APPLIED = frozenset(
    {
        "model",
        "wiki",
        "max_steps",
        "approve",
        "context_tokens",
        "keep_observations",
        "max_model_calls",
        "max_input_tokens",
        "max_output_tokens",
    }
)
"""Fields a later run may change: the new value steers the remaining steps."""
FIXED = frozenset({"protocol", "method", "task", "repetition_limit", "observation_cap"})
"""Fields an episode keeps from its start: a run giving another value is refused."""
EPISODE_START: dict[str, Any] = {
    "status": "running",
    "steps": 0,
    "answer": None,
    "trajectory": [],
    "usage": [],
    "audit": [],
    "stop_reason": None,
}
"""The output fields as a new episode starts, so a paused output has every one of them."""


def settle(stored: Mapping[str, Any] | None, context: object) -> Context:
    """Return the settings a run uses: the episode's `stored` ones with the run's changes.

    `context` is what the run was given (see `Context.read`); without stored settings (a
    new episode, or one saved before settings were kept) it is the whole answer. Raises
    `ConfigurationError` when it gives a `FIXED` field another value.
    """
    if not stored:
        return Context.read(context)
    kept = {name: stored[name] for name in FIELD_NAMES if name in stored}
    kept.setdefault("verify_finish", False)  # episodes begun before it ran without it
    kept.setdefault("known_titles", False)  # and before known_titles, without that
    requested = Context.read(context) if context is not None else None
    changes = {name: getattr(requested, name) for name in requested.given} if requested else {}
    for name in sorted(FIXED & changes.keys() & kept.keys()):
        if changes[name] != kept[name]:
            raise ConfigurationError(
                f"{name} cannot change during an episode (it runs with {kept[name]!r}, the "
                f"run gave {changes[name]!r}): start a new thread for another {name}"
            )
    return _context_of(tuple(sorted({**kept, **changes}.items())))


@functools.lru_cache(maxsize=64)
def _context_of(fields: tuple[tuple[str, Any], ...]) -> Context:
    """Return the `Context` of these field values, built once (nodes read it on every step)."""
    return Context.read(dict(fields))


def episode_context(
    state: State | Mapping[str, Any], context: object
) -> tuple[Context, dict[str, Any]]:
    """Return a node's settings and the state update that keeps them with the episode.

    The update is empty when nothing changed; a new episode's also sets `EPISODE_START`.
    """
    stored = state.get("context")
    settings = settle(stored, context)
    record = settings.as_dict()
    if record == stored:
        return settings, {}
    update: dict[str, Any] = {"context": record}
    if state.get("status") is None:
        update |= EPISODE_START
    return settings, update


def can_continue(values: Mapping[str, Any], settings: Context) -> bool:
    """Whether an episode with these `values` has steps left to run under `settings`.

    Yes while it runs, was stopped before the recursion limit or ran out of context (a run
    with a larger window or another model tries again), and when it ran out of budget but
    `settings` now allow more (steps, and the model-call and token budgets); no once it
    finished or halted.
    """
    status = values.get("status")
    if status in (None, "running", "recursion_limit", "context_exhausted"):
        return True
    return (
        status == "budget_exhausted"
        and settings.max_steps > values.get("steps", 0)
        and exceeded(values.get("usage") or [], settings, values.get("model_calls")) is None
    )
