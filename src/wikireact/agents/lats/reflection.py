"""Reflection: after a failed terminal, one call writes a lesson that later prompts show.

The prompt is Reflexion's (`wikireact.agents.reflexion.prompts.reflection_messages`): the
branch with its fenced observations and how it ended (never the gold answer). The lesson
is kept on the node and appended to the search's `reflections`, which every later value
prompt and expansion prompt shows (quoted, as notes, never instructions).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from langchain_core.language_models import BaseChatModel

from wikireact.agents.reflexion.fitting import fitted_attempt_messages
from wikireact.agents.reflexion.prompts import REFLECTION_FORM, reflection_messages
from wikireact.context import Context
from wikireact.models.variants import prompt_variant
from wikireact.nodes.model_call import call_model, reply_text, reply_tokens
from wikireact.prompting.lessons import LESSON_CHARS
from wikireact.state import Step


def write_lesson(
    question: str,
    steps: Sequence[Step],
    outcome: str,
    context: Context,
    model: BaseChatModel,
    index: int,
) -> tuple[str | None, tuple[int, int]]:
    """Return the lesson of a failed branch (None for an empty reply) and the call's tokens."""
    messages = fitted_attempt_messages(
        partial(reflection_messages, variant=prompt_variant(model)),
        question,
        steps,
        outcome,
        context,
        model,
    )
    failure = "the model did not write a reflection"
    reply = call_model(model, messages, index=index, failure=failure, reply_form=REFLECTION_FORM)
    lesson = " ".join(reply_text(reply).removeprefix("Lesson:").split())[:LESSON_CHARS]
    return lesson or None, reply_tokens(reply)
