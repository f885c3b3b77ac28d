"""The agent as a compact tool of another agent, step events in `astream_events`, `draw_ascii`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import GOOD_RUN, QUESTION, SpyModel, thread

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.tool import compact_tool

ACTIONS = ["Search[Scott Derrickson]", "Search[Ed Wood]", "Lookup[born]", "Finish[yes]"]


def outer_model() -> SpyModel:
    """A tool-calling model that asks the wikireact tool once, then answers."""
    return SpyModel(
        outputs=[
            {"tool": "wikipedia_react", "args": {"question": QUESTION}, "content": ""},
            "Yes: both are American.",
        ]
    )


def test_a_compact_tool_inside_create_agent(wiki: MemorySource) -> None:
    agent_graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    outer = outer_model()
    agent = create_agent(outer, tools=[compact_tool(agent_graph)])
    out = agent.invoke({"messages": [HumanMessage("Same nationality?")]})
    reply = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert json.loads(str(reply.content)) == {
        "answer": "yes",
        "status": "finished",
        "pages_read": ["Scott Derrickson", "Ed Wood"],
    }
    assert len(str(reply.content)) < 120  # not the whole state
    assert outer.calls[1][-1].content == reply.content  # what the outer model read
    assert out["messages"][-1].content == "Yes: both are American."


def test_approvals_inside_the_tool_pause_the_calling_agent(wiki: MemorySource) -> None:
    agent_graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    tool = compact_tool(agent_graph, context={"approve": True})
    agent = create_agent(outer_model(), tools=[tool], checkpointer=InMemorySaver())
    out = agent.invoke({"messages": [HumanMessage("Same nationality?")]}, thread())
    asked = []
    while out.get("__interrupt__"):
        asked.append(out["__interrupt__"][0].value["proposed_action"])
        out = agent.invoke(Command(resume=True), thread())
    assert asked == ACTIONS[:3]  # every Search/Lookup waited for the outer agent's caller
    reply = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert json.loads(str(reply.content))["pages_read"] == ["Scott Derrickson", "Ed Wood"]


def test_the_compact_tool_gives_each_call_its_own_thread(wiki: MemorySource) -> None:
    saver = InMemorySaver()
    agent_graph = build_graph(saver, model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    tool = compact_tool(agent_graph)
    first = tool.invoke({"question": QUESTION})
    second = tool.invoke({"question": "Where was Ed Wood born?"})
    assert first["answer"] == second["answer"] == "yes"
    assert len({c.config["configurable"]["thread_id"] for c in saver.list(None)}) == 2


def test_the_compact_tool_async(wiki: MemorySource) -> None:
    agent_graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    out = asyncio.run(compact_tool(agent_graph).ainvoke({"question": QUESTION}))
    assert out["pages_read"] == ["Scott Derrickson", "Ed Wood"]


def test_steps_are_custom_events_in_astream_events(wiki: MemorySource) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)

    async def collect() -> list[Any]:
        return [
            event
            async for event in graph.astream_events({"question": QUESTION}, version="v2")
            if event["event"] == "on_custom_event"
        ]

    events = asyncio.run(collect())
    assert {e["name"] for e in events} == {"wikireact_step"}
    assert [e["data"]["action"] for e in events] == ACTIONS
    assert [e["data"]["step"] for e in events] == [1, 2, 3, 4]


def test_the_custom_stream_still_gives_each_step_once(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    events = list(graph.stream({"question": QUESTION}, thread(), stream_mode="custom"))
    assert [e["action"] for e in events] == ACTIONS


def test_draw_ascii() -> None:
    drawing = build_graph().get_graph().draw_ascii()
    assert all(node in drawing for node in ("reason", "parse", "act", "observe"))
