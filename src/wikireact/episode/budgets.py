"""An episode's budgets beside its steps: model calls, prompt tokens and reply tokens.

`Context.max_model_calls`, `max_input_tokens` and `max_output_tokens` (0: no limit) bound
what an episode costs; `exceeded` says, in one line, which one its usage has reached. The
episode then ends `budget_exhausted` with that reason (`stop_reason`); a run whose context
raises the budget continues it. The paper's settings (7 steps, no token limits) set none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from wikireact.context import Context

BUDGETS = (
    ("max_model_calls", "model calls"),
    ("max_input_tokens", "prompt tokens"),
    ("max_output_tokens", "reply tokens"),
)
"""Each budget's `Context` field and what it counts, in the order they are checked."""


def exceeded(
    usage: Iterable[Mapping[str, Any]], context: Context, calls: int | None = None
) -> str | None:
    """Return which budget `usage` (per-call token records) has reached, or None.

    `calls` is the model calls made when they are not one per record (an agent's own count).
    Only the budgets `context` sets are added up (by default none: no pass over every step).
    """
    limits = {name: getattr(context, name) for name, _ in BUDGETS}
    if not any(limits.values()):
        return None
    records = list(usage)
    for name, what in BUDGETS:
        limit = limits[name]
        if not limit:
            continue
        if name == "max_model_calls":
            used = len(records) if calls is None else calls
        else:
            used = sum(int(r.get(name.removeprefix("max_"), 0)) for r in records)
        if used >= limit:
            return f"{used} {what} used; the budget is {limit} ({name})"
    return None


def tokens_used(usage: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Return the prompt and reply tokens `usage` (per-call token records) adds up to."""
    records = list(usage)
    return {
        "input_tokens": sum(int(r.get("input_tokens", 0)) for r in records),
        "output_tokens": sum(int(r.get("output_tokens", 0)) for r in records),
    }
