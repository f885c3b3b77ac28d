"""Approval pauses as a pipeline meets them: complete outputs, telling payloads, JSON, schemas."""

from __future__ import annotations

import asyncio
import json
import operator
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, Send
from support import GOOD_RUN, QUESTION, thread
from typing_extensions import TypedDict

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import ConfigurationError
from wikireact.graph import graph as served_graph

QUESTIONS = [QUESTION, "Where was Ed Wood born?", "Where does Scott Derrickson live?"]


def test_a_paused_output_has_the_output_fields(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    out = graph.invoke({"question": QUESTION}, thread(), context=Context(approve=True))
    assert (out["status"], out["steps"], out["answer"]) == ("running", 0, None)
    assert out["trajectory"] == [] and out["audit"] == [] and out["usage"] == []
    out = graph.invoke(Command(resume=True), thread())
    assert (out["status"], out["steps"], len(out["trajectory"])) == ("running", 1, 1)


def test_an_interrupted_output_is_json(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    out = graph.invoke({"question": QUESTION}, thread(), context=Context(approve=True))
    decoded = json.loads(json.dumps(out))
    assert decoded["__interrupt__"][0]["value"]["proposed_action"] == "Search[Scott Derrickson]"
    assert out["__interrupt__"][0].value == decoded["__interrupt__"][0]["value"]
    graph.invoke(Command(resume={out["__interrupt__"][0].id: True}), thread())
    later = asyncio.run(graph.ainvoke(None, thread()))  # paused at step 2, asynchronously
    assert json.loads(json.dumps(later))["__interrupt__"][0]["value"]["step"] == 2


def test_the_payload_names_the_question_and_the_thread(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    out = graph.invoke({"question": QUESTION}, thread("q-42"), context=Context(approve=True))
    payload = out["__interrupt__"][0].value
    assert payload["question"] == QUESTION and payload["thread_id"] == "q-42"


class Batch(TypedDict):
    questions: list[str]
    results: Annotated[list[Any], operator.add]


class One(TypedDict):
    question: str


class Review(TypedDict):
    """The parent's own context schema; the agent reads its `approve`."""

    approve: bool


def test_a_parent_tells_three_pending_approvals_apart(wiki: MemorySource) -> None:
    """Approve one, edit one, reject one, chosen by the question each payload names."""
    agent = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)

    def answer(state: One) -> dict[str, Any]:
        out = agent.invoke({"question": state["question"]})
        return {"results": [(state["question"], out["trajectory"][0]["observation"][:20])]}

    builder = StateGraph(Batch, context_schema=Review)
    builder.add_node("answer", answer, input_schema=One)
    builder.add_conditional_edges(
        START, lambda s: [Send("answer", {"question": q}) for q in s["questions"]], ["answer"]
    )
    parent = builder.compile(checkpointer=InMemorySaver())
    paused = parent.invoke(
        {"questions": QUESTIONS, "results": []}, thread(), context={"approve": True}
    )
    pending = paused["__interrupt__"]
    assert sorted(i.value["question"] for i in pending) == sorted(QUESTIONS)
    decisions = {
        QUESTIONS[0]: True,
        QUESTIONS[1]: {"action": "Search[Ed Wood]"},
        QUESTIONS[2]: {"reject": "not now"},
    }
    resume = {i.id: decisions[i.value["question"]] for i in pending}
    parent.invoke(Command(resume=resume), thread(), context={"approve": False})
    results = dict(parent.get_state(thread()).values["results"])
    assert results == {
        QUESTIONS[0]: "Scott Derrickson (bo",
        QUESTIONS[1]: "Edward Davis Wood Jr",
        QUESTIONS[2]: "A human reviewer rej",
    }


def test_approval_without_a_checkpointer_is_refused_at_the_start(wiki: MemorySource) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    with pytest.raises(ConfigurationError, match="approve needs a checkpointer"):
        graph.invoke({"question": QUESTION}, context=Context(approve=True))


def test_the_schemas_describe_every_field() -> None:
    for schema in (served_graph.get_input_jsonschema(), served_graph.get_output_jsonschema()):
        assert schema is not None
        described = {name: "description" in p for name, p in schema["properties"].items()}
        assert all(described.values()), described
    context_schema = served_graph.get_context_jsonschema()
    assert context_schema is not None
    context = context_schema["properties"]
    assert context["max_steps"]["default"] == 7 and context["max_steps"]["minimum"] == 1
    assert context["repetition_limit"]["minimum"] == 2
    assert context["observation_cap"]["minimum"] == 50
    assert context["approve"]["default"] is False
    assert all("default" in p for p in context.values()), context
