"""`reason`: ask the model for the next Thought and Action (as text, or as a tool call)."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from wikireact.context import Context, validate_question
from wikireact.episode.resources import DEFAULT_RESOURCES, Resources
from wikireact.episode.stored_context import episode_context
from wikireact.errors import ModelCallError
from wikireact.models.call_metadata import CALL_INDEX_KEY
from wikireact.models.outages import stops_episode
from wikireact.models.variants import prompt_variant
from wikireact.prompting.react import STOP_SEQUENCES
from wikireact.prompting.tools import bind_protocol_tools, build_tool_messages
from wikireact.prompting.variants import build_prompt
from wikireact.protocols.text import cut_at_observation
from wikireact.protocols.tools import calls_of_reply
from wikireact.state import State, new_step

_THINK_BLOCK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)


__all__ = ["ModelCallError", "reason"]


def reason(
    state: State, runtime: Runtime[Context], resources: Resources = DEFAULT_RESOURCES
) -> dict[str, Any]:
    """Build the prompt (in the model's variant) from the question and history; call the model.

    Stops at the next `Observation` and also cuts any observation the model wrote anyway,
    so a made-up observation never enters the history. In the tools protocol the three
    tools are bound to the model and the reply's tool calls are kept for `parse`. An outage
    of the model, or a setting found unusable mid-call (`wikireact.models.outages`), raises
    the resumable `ModelCallError`; any other exception is a bug and propagates as it is.
    """
    context, kept = episode_context(state, runtime.context)
    question = validate_question(state.get("question"))
    history = state.get("trajectory") or []
    model = resources.chat_model(context)
    tools = context.protocol == "tools"
    if tools:
        messages = build_tool_messages(question, history, context.method, resources.exemplars)
    else:
        messages = build_prompt(
            prompt_variant(model), question, history, context.method, resources.exemplars
        )
    runnable = bind_protocol_tools(model) if tools else model
    try:
        reply = runnable.invoke(
            messages,
            stop=STOP_SEQUENCES,
            config={"metadata": {CALL_INDEX_KEY: len(history)}, "run_name": "wikireact_model"},
        )
    except Exception as exc:
        if not stops_episode(exc):
            raise  # a bug (e.g. a TypeError in a model wrapper): resuming would meet it again
        detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        raise ModelCallError(
            f"the model did not answer step {len(history) + 1} ({type(exc).__name__}: {detail})"
        ) from exc
    text = _THINK_BLOCK.sub("", reply.text).strip()
    usage = getattr(reply, "usage_metadata", None) or {}
    return {
        **kept,
        "current": new_step(
            raw=cut_at_observation(text),
            calls=calls_of_reply(reply, len(history) + 1)
            if tools and isinstance(reply, AIMessage)
            else [],
            input_tokens=int(usage.get("input_tokens", 0)),
            output_tokens=int(usage.get("output_tokens", 0)),
        ),
    }
