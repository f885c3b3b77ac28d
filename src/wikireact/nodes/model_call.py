"""One model call of an episode: invoked with its call index, failures made one line, text cleaned.

Shared by ReAct's `reason` and by the other agents' nodes that call the model (ReWOO's
planner, LLM steps and solver), so every call carries the same metadata (the call's
index, read by scripted and cached models) and fails the same way (`ModelCallError`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from wikireact.errors import ContextExhaustedError, ModelCallError
from wikireact.models.call_metadata import CALL_INDEX_KEY
from wikireact.models.outages import stops_episode
from wikireact.models.overflow import is_context_overflow
from wikireact.models.reply_form import ReplyForm

_THINK_BLOCK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
RUN_NAME = "wikireact_model"


def call_model(
    runnable: Runnable[LanguageModelInput, Any],
    messages: Sequence[BaseMessage],
    *,
    index: int,
    failure: str,
    stop: list[str] | None = None,
    reply_form: ReplyForm | None = None,
) -> Any:
    """Invoke the model on `messages` as call `index` of its episode; return its reply.

    An outage of the model, or a setting found unusable mid-call
    (`wikireact.models.outages`), becomes the resumable `ModelCallError` saying `failure`
    (e.g. "the model did not answer step 3") with the exception's first line; any other
    exception is a bug and propagates as it is (resuming would meet it again). A prompt
    the model refuses as longer than its context window (`wikireact.models.overflow`) raises
    `ContextExhaustedError`. `reply_form` tells a model that decodes under a grammar (a local
    model) which form the reply takes (`wikireact.models.reply_form`); other models ignore it.
    """
    metadata = {CALL_INDEX_KEY: index, **(reply_form.as_metadata() if reply_form else {})}
    try:
        return runnable.invoke(
            list(messages), stop=stop, config={"metadata": metadata, "run_name": RUN_NAME}
        )
    except Exception as exc:
        if is_context_overflow(exc):
            raise ContextExhaustedError(None, None, None) from exc
        if not stops_episode(exc):
            raise
        detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        raise ModelCallError(f"{failure} ({type(exc).__name__}: {detail})") from exc


def reply_text(reply: Any) -> str:
    """Return a reply's text without any `<think>` block, stripped."""
    return _THINK_BLOCK.sub("", str(getattr(reply, "text", reply))).strip()


def reply_tokens(reply: Any) -> tuple[int, int]:
    """Return a reply's input and output tokens (0 when the model did not report them)."""
    usage = getattr(reply, "usage_metadata", None) or {}
    return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
