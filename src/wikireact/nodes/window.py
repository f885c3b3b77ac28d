"""An agent's own prompt fitted to its model's context window, and the update when it cannot fit.

ReAct's `reason` fits its step prompt itself; the other agents' own calls (ReWOO's planner,
LLM steps and solver, Plan-and-Execute's planner and replanner, Reflexion's reflection and
self-check) build theirs with `fit_to_window` (`wikireact.prompting.fitting`: the oldest
evidence, results or observations cleared first, then extras such as exemplars). A prompt
that still does not fit, or that the model refuses as too long, raises
`ContextExhaustedError`; the node catching it ends the episode with `exhausted(exc)`: status
`context_exhausted`, resumable with a larger window (`--context-tokens`) or another model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel

from wikireact.context import Context
from wikireact.errors import ContextExhaustedError
from wikireact.models.context_window import context_budget
from wikireact.prompting.fitting import Builder, Fitted, fit_prompt


def fit_to_window(
    build: Builder,
    model: BaseChatModel,
    context: Context,
    *,
    items: int = 0,
    extras: int = 0,
    steps: int = 0,
) -> Fitted:
    """Return `build`'s prompt fitted to `model`'s window under `context` (`fit_prompt`'s counts).

    Raises `ContextExhaustedError` when even the smallest prompt does not fit.
    """
    budget = context_budget(model, context.model, context.context_tokens)
    return fit_prompt(
        build,
        budget,
        items=items,
        extras=extras,
        steps=steps,
        keep_latest=context.keep_observations,
    )


def exhausted(exc: ContextExhaustedError) -> dict[str, Any]:
    """Return the update that ends an episode whose prompt cannot fit: `context_exhausted`, why."""
    return {"status": "context_exhausted", "stop_reason": str(exc)}


def reopened(state: Mapping[str, Any]) -> dict[str, Any]:
    """Return the update that clears the stop reason of an episode a larger window or budget continues."""
    stopped = state.get("status") in ("context_exhausted", "budget_exhausted")
    return {"stop_reason": None} if stopped else {}
