"""`compact_tool`: the ReAct agent as a tool of another agent, answering in three fields.

`graph.as_tool()` hands the calling model the whole state (trajectory, usage, audit: about
2 KB for two steps, and growing). The compact tool runs one episode per call and returns
only what the caller's model needs:

    {"answer": "yes", "status": "finished", "pages_read": ["Scott Derrickson", "Ed Wood"]}

`pages_read` lists the pages the episode's Searches opened (titles as the source resolved
them, from the state's `pages_read`), in order, once each. A graph with its own checkpointer gets a new thread per call
(one thread holds one episode); without one, the episode runs as a subgraph of the
calling agent (under its checkpointer, if it has one). With `approve` on, a graph nested
under a checkpointed agent pauses that agent; a graph with its own checkpointer would
pause on a thread nobody resumes, so keep approval off there.

The question's limits (1 to `MAX_QUESTION_CHARS` characters, spaces at the ends not
counted) are in the tool's schema, so the calling model sees them. A call that breaks them
(or gives no text) runs nothing and comes back as the tool's result, one line saying what
was wrong (`not run: the question is empty; ask again ...`), so the calling agent goes on and
its model can ask again.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from wikireact.context import MAX_QUESTION_CHARS, Context, validate_question
from wikireact.protocols.text import valid_unicode

DESCRIPTION = (
    "Answer a factual question by searching and reading Wikipedia step by step (ReAct). "
    "Returns the answer (null if none was found), the episode's status and the pages read."
)


class Question(BaseModel):
    """The tool's one argument, with the limits an episode's question has."""

    model_config = ConfigDict(str_strip_whitespace=True)

    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        description=(
            f"A self-contained factual question, in English (1 to {MAX_QUESTION_CHARS} characters)."
        ),
    )

    @field_validator("question", mode="before")
    @classmethod
    def _repaired(cls, value: object) -> object:
        """Replace invalid Unicode (a lone surrogate) as the episode's door does, not refuse it."""
        return valid_unicode(value) if isinstance(value, str) else value


def compact_tool(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    *,
    name: str = "wikipedia_react",
    description: str = DESCRIPTION,
    context: Context | dict[str, Any] | None = None,
) -> StructuredTool:
    """Return a tool that answers a question with `graph` in three fields (see the module docstring).

    `context` is the episodes' settings (default: the environment's).
    """

    def run(question: str) -> dict[str, Any]:
        chunks = graph.stream(
            {"question": question}, _config(graph), context=context, stream_mode="values"
        )
        return compact_result(_last(list(chunks)))

    async def arun(question: str) -> dict[str, Any]:
        chunks = graph.astream(
            {"question": question}, _config(graph), context=context, stream_mode="values"
        )
        return compact_result(_last([chunk async for chunk in chunks]))

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=name,
        description=description,
        args_schema=Question,
        handle_validation_error=refusal,
    )


def refusal(error: ValidationError) -> str:
    """Return, as the tool's result, the one line saying why a call's arguments were refused."""
    reasons = "; ".join(_reason(detail) for detail in error.errors())
    return (
        f"not run: {reasons}; ask again with one question of 1 to {MAX_QUESTION_CHARS} "
        "characters as `question`"
    )


def _reason(detail: ErrorDetails) -> str:
    """Return one validation problem in words: the door's own for a question given as text."""
    if tuple(detail["loc"]) == ("question",) and isinstance(detail["input"], str):
        try:
            validate_question(detail["input"])
        except ValueError as exc:
            return str(exc)
    where = ".".join(str(part) for part in detail["loc"]) or "arguments"
    return f"{where}: {detail['msg']}"


def compact_result(values: dict[str, Any]) -> dict[str, Any]:
    """Return answer, status and pages read from an episode's final state values."""
    return {
        "answer": values.get("answer"),
        "status": values.get("status"),
        "pages_read": list(values.get("pages_read") or []),
    }


def _last(chunks: list[Any]) -> dict[str, Any]:
    """Return the last `values` chunk: the episode's whole state (pages read included)."""
    return chunks[-1] if chunks and isinstance(chunks[-1], dict) else {}


def _config(graph: CompiledStateGraph[Any, Any, Any, Any]) -> RunnableConfig | None:
    """Return a new thread when the graph keeps its own checkpoints; else None (the caller's run decides)."""
    if isinstance(graph.checkpointer, BaseCheckpointSaver):
        return {"configurable": {"thread_id": f"tool-{uuid.uuid4().hex}"}}
    return None
