"""`reason`: ask the model for the next Thought and Action (as text, or as a tool call)."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from wikireact.context import Context, validate_question
from wikireact.episode.resources import DEFAULT_RESOURCES, Resources
from wikireact.episode.stored_context import episode_context
from wikireact.errors import ContextExhaustedError, ModelCallError
from wikireact.models.call_metadata import CALL_OFFSET_KEY
from wikireact.models.context_window import context_budget
from wikireact.models.local.known_titles import with_known_titles
from wikireact.models.variants import prompt_variant
from wikireact.nodes.model_call import call_model, reply_text, reply_tokens
from wikireact.prompting.fitting import Fitted, Plan, clearable_steps, fit_prompt, fitted_history
from wikireact.prompting.react import STOP_SEQUENCES
from wikireact.prompting.tools import bind_protocol_tools, build_tool_messages
from wikireact.prompting.variants import build_prompt, variant_exemplars
from wikireact.protocols.text import cut_at_observation
from wikireact.protocols.tools import calls_of_reply
from wikireact.state import State, new_step

__all__ = ["ModelCallError", "reason"]


def reason(
    state: State,
    runtime: Runtime[Context],
    config: RunnableConfig,
    resources: Resources = DEFAULT_RESOURCES,
) -> dict[str, Any]:
    """Build the prompt (in the model's variant and task) from the question, lessons and history; call the model.

    Stops at the next `Observation` and also cuts any observation the model wrote anyway,
    so a made-up observation never enters the history. In the tools protocol the three
    tools are bound to the model and the reply's tool calls are kept for `parse`. An outage
    of the model, or a setting found unusable mid-call (`wikireact.models.outages`), raises
    the resumable `ModelCallError`; any other exception is a bug and propagates as it is.

    The prompt is fitted to the model's context window (`wikireact.prompting.fitting`: older
    observations cleared, the state untouched); one that cannot fit, or that the model refuses
    as too long, ends the run with status `context_exhausted` (resumable with a larger window).

    The call's index (run metadata `CALL_INDEX_KEY`, read by scripted and cached models) is
    the step's index plus the calls an enclosing agent made before this episode
    (`CALL_OFFSET_KEY` in the run's metadata; none for a plain ReAct episode).
    """
    context, kept = episode_context(state, runtime.context)
    validate_question(state.get("question"))
    history = state.get("trajectory") or []
    model = resources.chat_model(context)
    tools = context.protocol == "tools"
    runnable = (
        bind_protocol_tools(model, context.task)
        if tools
        else with_known_titles(model, context, lambda: resources.wiki_source(context))
    )
    try:
        fitted = fitted_step_prompt(state, context, resources, model)
        started = time.monotonic()
        reply = call_model(
            runnable,
            fitted.messages,
            index=_call_offset(config) + len(history),
            failure=f"the model did not answer step {len(history) + 1}",
            stop=STOP_SEQUENCES,
        )
    except ContextExhaustedError as exc:
        return {**kept, "status": "context_exhausted", "stop_reason": str(exc)}
    seconds = round(time.monotonic() - started, 3)
    text = reply_text(reply)
    input_tokens, output_tokens = reply_tokens(reply)
    reopened = {"status": "running", "stop_reason": None}
    return {
        **kept,
        "model_calls": len(history) + 1,  # this call included, also while a review pauses
        **(reopened if state.get("status") == "context_exhausted" else {}),
        "current": new_step(
            raw=cut_at_observation(text),
            calls=calls_of_reply(reply, len(history) + 1)
            if tools and isinstance(reply, AIMessage)
            else [],
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cleared=fitted.cleared,
            model_seconds=seconds,
        ),
    }


def fitted_step_prompt(
    state: State,
    context: Context,
    resources: Resources,
    model: BaseChatModel,
    after: Sequence[BaseMessage] = (),
) -> Fitted:
    """Return the step's prompt fitted to the model's context window (`wikireact.prompting.fitting`).

    `after`: turns the caller sends after the prompt (LATS's request for candidates): counted in
    the fit, not returned. Raises `ContextExhaustedError` when even the smallest prompt does not fit.
    """
    question = validate_question(state.get("question"))
    history = state.get("trajectory") or []
    lessons = list(state.get("lessons") or [])
    tools = context.protocol == "tools"
    variant = "default" if tools else prompt_variant(model)
    exemplars = variant_exemplars(variant, context.method, context.task, resources.exemplars)
    clearable = functools.cache(lambda: clearable_steps(history))  # only once a prompt is cut

    def build(plan: Plan) -> list[BaseMessage]:
        shown = fitted_history(history, plan, clearable() if plan.cleared else ())
        kept_exemplars = exemplars[: max(len(exemplars) - plan.trimmed, 0)]
        kept_lessons = lessons[max(plan.trimmed - len(exemplars), 0) :]
        if tools:
            messages = build_tool_messages(
                question, shown, context.method, kept_exemplars, context.task, kept_lessons
            )
        else:
            messages = build_prompt(
                variant, question, shown, context.method, kept_exemplars, context.task, kept_lessons
            )
        return messages + list(after) if after else messages  # a long prompt: no copy for none

    fitted = fit_prompt(
        build,
        context_budget(model, context.model, context.context_tokens),
        items=lambda: len(clearable()),
        extras=len(exemplars) + len(lessons),
        steps=len(history),
        keep_latest=context.keep_observations,
        cleared_before=_cleared_before(state),
    )
    if not after:
        return fitted
    return replace(fitted, messages=fitted.messages[: len(fitted.messages) - len(after)])


def _cleared_before(state: State) -> int:
    """Return the observations the previous step's prompt cleared (where fitting searches first)."""
    usage = state.get("usage") or []
    return int(usage[-1].get("cleared", 0)) if usage else 0


def _call_offset(config: RunnableConfig) -> int:
    """Return the model calls made before this episode by an enclosing agent (0 without one)."""
    return int((config.get("metadata") or {}).get(CALL_OFFSET_KEY, 0))
