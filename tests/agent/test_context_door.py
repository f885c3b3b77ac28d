"""The run's context is read and checked at the door: text values, foreign contexts, one-line errors."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from support import GOOD_RUN, QUESTION, thread
from typing_extensions import TypedDict

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import ConfigurationError
from wikireact.models.scripted import ScriptOutput

LOOKUPS: list[ScriptOutput] = [
    "Thought: look.\nAction: Search[Ed Wood]",
    *[f"Thought: more.\nAction: Lookup[word{i}]" for i in range(12)],
]


@pytest.mark.parametrize("text", ["false", "no", "0", "off", " FALSE "])
def test_approve_as_text_no_means_no(text: str, wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    out = graph.invoke({"question": QUESTION}, thread(), context={"approve": text})
    assert "__interrupt__" not in out and out["answer"] == "yes"


@pytest.mark.parametrize("text", ["true", "yes", "1", "on"])
def test_approve_as_text_yes_means_yes(text: str, wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    out = graph.invoke({"question": QUESTION}, thread(), context={"approve": text})
    assert out["__interrupt__"]


def test_numbers_as_text_are_read(wiki: MemorySource) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=LOOKUPS), wiki=wiki)
    out = graph.invoke({"question": QUESTION}, context={"max_steps": "2"})
    assert out["status"] == "budget_exhausted" and out["steps"] == 2
    assert Context(max_steps=" 7 ").max_steps == 7  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"max_steps": "seven"}, "max_steps must be a whole number, got 'seven'"),
        ({"max_steps": 2.5}, "max_steps must be a whole number, got 2.5"),
        ({"max_steps": True}, "max_steps must be a whole number, got True"),
        ({"max_steps": "0"}, "max_steps must be at least 1, got 0"),
        ({"repetition_limit": "1"}, "repetition_limit must be at least 2, got 1"),
        ({"approve": "maybe"}, "approve must be 1/true/yes/on or 0/false/no/off, got 'maybe'"),
        ({"protocol": 3}, "protocol must be text or tools, got 3"),
        ({"model": None}, "model must be text, got None"),
        ({"max_step": 3}, "unknown setting 'max_step' (did you mean max_steps?)"),
    ],
)
def test_bad_settings_are_refused_in_one_line(
    context: dict[str, Any], message: str, wiki: MemorySource
) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    with pytest.raises(ConfigurationError) as caught:
        graph.invoke({"question": QUESTION}, context=context)
    assert str(caught.value) == message


def test_the_schema_minimums_are_the_checked_ones() -> None:
    from pydantic import TypeAdapter

    schema = TypeAdapter(Context).json_schema()["properties"]
    minimums = {name: p["minimum"] for name, p in schema.items() if "minimum" in p}
    assert minimums == {
        "max_steps": 1,
        "repetition_limit": 2,
        "observation_cap": 50,
        "context_tokens": 0,
        "keep_observations": 1,
        "max_model_calls": 0,
        "max_input_tokens": 0,
        "max_output_tokens": 0,
    }
    for name, minimum in minimums.items():
        assert getattr(Context.read({name: minimum}), name) == minimum
        with pytest.raises(ConfigurationError, match=f"{name} must be at least {minimum}"):
            Context.read({name: minimum - 1})


@dataclass
class ParentCtx:
    """A parent pipeline's own context: one field of its own, one the agent shares."""

    user_id: str
    max_steps: int = 2


class Parent(TypedDict):
    questions: list[str]
    answers: Annotated[list[Any], operator.add]


class One(TypedDict):
    question: str


def parent_pipeline(agent: Any) -> Any:
    """A parent with its own state and context schema, fanning questions out with `Send`."""

    def answer(state: One, *, runtime: Runtime[ParentCtx]) -> dict[str, Any]:
        out = agent.invoke({"question": state["question"]})
        return {"answers": [(runtime.context.user_id, out["status"], out["steps"])]}

    builder = StateGraph(Parent, context_schema=ParentCtx)
    builder.add_node("answer", answer, input_schema=One)
    builder.add_conditional_edges(
        START, lambda s: [Send("answer", {"question": q}) for q in s["questions"]], ["answer"]
    )
    return builder.compile(checkpointer=InMemorySaver())


def test_a_parent_context_gives_the_fields_the_agent_shares(wiki: MemorySource) -> None:
    agent = build_graph(model=ScriptedChatModel(outputs=LOOKUPS), wiki=wiki)
    out = parent_pipeline(agent).invoke(
        {"questions": [QUESTION, "Where was Ed Wood born?"], "answers": []},
        thread(),
        context=ParentCtx(user_id="u7"),
    )
    assert out["answers"] == [("u7", "budget_exhausted", 2)] * 2  # max_steps from ParentCtx


def test_a_parent_context_dict_with_its_own_keys(wiki: MemorySource) -> None:
    agent = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    out = agent.invoke({"question": QUESTION}, context={"user_id": "u7", "approve": "no"})
    assert out["answer"] == "yes"
