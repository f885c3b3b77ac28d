"""Embedding the wikireact agent as a node of a larger LangGraph graph.

The parent graph has its own state (`questions`, `answers`). It fans out one `answer_one`
task per question with `Send`; each task runs the agent as a subgraph and returns only
`{question: answer}`, merged by a dict reducer. The parent shares no key with the agent,
so nothing of the agent's state (trajectory, usage, ...) is copied or duplicated into it.

Run: python examples/pipeline.py  (uses the scripted model and an in-memory wiki)
"""

from __future__ import annotations

import operator
from typing import Annotated

from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send
from typing_extensions import TypedDict


class PipelineState(TypedDict):
    """The parent's own state."""

    questions: list[str]
    answers: Annotated[dict[str, str | None], operator.or_]


class OneQuestion(TypedDict):
    """What each fanned-out task receives."""

    question: str


def build_pipeline(agent: CompiledStateGraph) -> CompiledStateGraph:
    """Build a graph that answers every question in `questions` with `agent`."""

    def fan_out(state: PipelineState) -> list[Send]:
        return [Send("answer_one", {"question": q}) for q in state["questions"]]

    def answer_one(task: OneQuestion) -> dict:
        result = agent.invoke({"question": task["question"]})
        return {"answers": {task["question"]: result["answer"]}}

    builder = StateGraph(PipelineState)
    builder.add_node("answer_one", answer_one)
    builder.add_conditional_edges(START, fan_out, ["answer_one"])
    return builder.compile()


if __name__ == "__main__":
    from wikireact import MemorySource, ScriptedChatModel, build_graph

    agent = build_graph(
        model=ScriptedChatModel(
            outputs=[
                "Thought: look.\nAction: Search[Ed Wood]",
                "Thought: done.\nAction: Finish[American]",
            ]
        ),
        wiki=MemorySource({"Ed Wood": "Ed Wood was an American filmmaker."}),
    )
    out = build_pipeline(agent).invoke(
        {"questions": ["What nationality was Ed Wood?"], "answers": {}}
    )
    print(out)
