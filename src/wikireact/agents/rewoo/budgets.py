"""ReWOO's budgets: the model calls and tokens of its planner, LLM steps and solver.

`Context.max_model_calls`, `max_input_tokens` and `max_output_tokens` count the whole
episode (`wikireact.episode.budgets`). The planner checks them after its call, the
scheduler after recording a round (and never sends more LLM steps than the calls left);
one reached ends the episode `budget_exhausted` with the reason in `stop_reason`, and a run
whose context raises the budget continues it from the recorded steps (`graph.route_start`).

ReWOO's step limit (`Context.max_steps`) bounds the plan the planner writes, not the steps
run after it: an episode never stops on steps, and its `steps` (the plan counted as one,
then each plan step) may reach `max_steps` while the budget that stopped it is raised.
So whether it goes on is decided by the budgets alone (`can_go_on`), not by the shared
step rule (`wikireact.episode.stored_context.can_continue`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wikireact.agents.rewoo.state import RewooState
from wikireact.context import Context
from wikireact.episode.budgets import exceeded
from wikireact.episode.stored_context import can_continue
from wikireact.state import StepUsage


def spent(
    state: RewooState | Mapping[str, Any],
    context: Context,
    recorded: Sequence[StepUsage] = (),
    calls: int = 0,
) -> str | None:
    """Return which budget the episode has reached, with the `recorded` steps and `calls` more."""
    usage: list[Any] = [*(state.get("usage") or []), *recorded]
    return exceeded(usage, context, state.get("model_calls", 0) + calls)


def calls_left(state: RewooState, context: Context) -> int | None:
    """Return the model calls the call budget leaves (None: no call budget)."""
    if not context.max_model_calls:
        return None
    return max(context.max_model_calls - state.get("model_calls", 0), 0)


def can_go_on(values: Mapping[str, Any], settings: Context) -> bool:
    """Whether a ReWOO episode with these `values` has work left under `settings`.

    As every agent's rule (`can_continue`), except that an episode out of budget goes on
    once `settings` raise the budget that stopped it, whatever its step count: its plan,
    written within the step limit, is what remains to run.
    """
    if values.get("status") != "budget_exhausted":
        return can_continue(values, settings)
    return spent(values, settings) is None
