"""`compact_tool` inside `create_agent`: a question it cannot take is a result the caller retries.

The question's limits (1 to `MAX_QUESTION_CHARS` characters) are in the tool's schema, so the
calling model sees them; a call that breaks them comes back as the tool's result, one line
saying what was wrong, and the calling agent goes on.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from support import GOOD_RUN, QUESTION, SpyModel

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.context import MAX_QUESTION_CHARS
from wikireact.models.scripted import ScriptOutput
from wikireact.tool import compact_tool

BAD_QUESTIONS = {
    "": "the question is empty",
    "   \n ": "the question is empty",
    "x" * (MAX_QUESTION_CHARS + 1): (
        f"the question is {MAX_QUESTION_CHARS + 1} characters long; "
        f"the limit is {MAX_QUESTION_CHARS}"
    ),
}


def asks(question: object) -> ScriptOutput:
    """A tool call of the outer model asking the wikireact tool `question`."""
    return {"tool": "wikipedia_react", "args": {"question": question}, "content": ""}


def outer_model() -> SpyModel:
    """An outer model that asks three bad questions, then a good one, then answers."""
    return SpyModel(
        outputs=[*(asks(q) for q in BAD_QUESTIONS), asks(QUESTION), "Yes: both are American."]
    )


def check_the_run(out: dict[str, object], outer: SpyModel) -> None:
    """The bad calls came back as one-line refusals the outer model read; the good one ran."""
    replies = [m for m in out["messages"] if isinstance(m, ToolMessage)]  # type: ignore[attr-defined]
    assert len(replies) == 4
    for reply, reason in zip(replies, BAD_QUESTIONS.values(), strict=False):
        assert reply.status == "error"
        assert str(reply.content).startswith(f"not run: {reason}; ask again")
        assert "\n" not in str(reply.content) and len(str(reply.content)) < 200
    for call, reply in zip(outer.calls[1:], replies, strict=True):
        assert call[-1].content == reply.content  # each reply was what the outer model read next
    assert json.loads(str(replies[-1].content))["answer"] == "yes"
    assert out["messages"][-1].content == "Yes: both are American."  # type: ignore[index]


def test_a_bad_question_is_a_result_the_outer_model_retries(wiki: MemorySource) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    outer = outer_model()
    agent = create_agent(outer, tools=[compact_tool(graph)])
    check_the_run(agent.invoke({"messages": [HumanMessage("Same nationality?")]}), outer)


def test_a_bad_question_is_a_result_the_outer_model_retries_async(wiki: MemorySource) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    outer = outer_model()
    agent = create_agent(outer, tools=[compact_tool(graph)])
    out = asyncio.run(agent.ainvoke({"messages": [HumanMessage("Same nationality?")]}))
    check_the_run(out, outer)


def test_the_limits_are_in_the_schema_the_outer_model_is_given(wiki: MemorySource) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    outer = outer_model()
    create_agent(outer, tools=[compact_tool(graph)]).invoke({"messages": [HumanMessage("?")]})
    (bound,) = outer.tools[0]  # as a provider's chat model sends it:
    question = convert_to_openai_tool(bound)["function"]["parameters"]["properties"]["question"]
    assert (question["type"], question["minLength"], question["maxLength"]) == (
        "string",
        1,
        MAX_QUESTION_CHARS,
    )


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ({"question": 5}, "question: Input should be a valid string"),
        ({"query": QUESTION}, "question: Field required"),
    ],
)
def test_other_bad_arguments_are_refused_the_same_way(
    wiki: MemorySource, arguments: dict[str, object], reason: str
) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    refusal = compact_tool(graph).invoke(arguments)
    assert str(refusal).startswith(f"not run: {reason}; ask again")


def test_a_question_with_invalid_unicode_is_repaired_and_run(wiki: MemorySource) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    out = compact_tool(graph).invoke({"question": "Same nationality\ud800?"})
    assert out["answer"] == "yes"
