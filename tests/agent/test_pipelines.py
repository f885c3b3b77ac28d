"""Pipeline use: invoke/ainvoke, batch/abatch with a concurrency limit, streaming, a parent graph."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from support import GOOD_RUN, QUESTION, SpyModel, thread

from wikireact import MemorySource, ScriptedChatModel, build_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from pipeline import build_pipeline  # noqa: E402

ACTIONS = ["Search[Scott Derrickson]", "Search[Ed Wood]", "Lookup[born]", "Finish[yes]"]


def test_ainvoke(wiki: MemorySource) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    out = asyncio.run(graph.ainvoke({"question": QUESTION}))
    assert [s["action"] for s in out["trajectory"]] == ACTIONS


def test_batch_respects_the_concurrency_limit(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    model = SpyModel(outputs=GOOD_RUN, delay_s=0.05)
    graph = build_graph(checkpointer, model=model, wiki=wiki)
    configs: list[RunnableConfig] = [{**thread(f"b{i}"), "max_concurrency": 2} for i in range(6)]
    outs = graph.batch([{"question": QUESTION}] * 6, configs)
    assert all(
        o["answer"] == "yes" and [s["action"] for s in o["trajectory"]] == ACTIONS for o in outs
    )
    assert model.peak == 2


def test_abatch_respects_the_concurrency_limit(wiki: MemorySource) -> None:
    model = SpyModel(outputs=GOOD_RUN, delay_s=0.05)
    graph = build_graph(model=model, wiki=wiki)
    outs = asyncio.run(graph.abatch([{"question": QUESTION}] * 6, {"max_concurrency": 3}))
    assert [o["answer"] for o in outs] == ["yes"] * 6
    assert model.peak == 3


def test_stream_emits_one_custom_event_per_observation(wiki: MemorySource) -> None:
    graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    custom: list[Any] = []
    updates: list[Any] = []
    for mode, chunk in graph.stream({"question": QUESTION}, stream_mode=["updates", "custom"]):
        (custom if mode == "custom" else updates).append(chunk)
    assert [e["step"] for e in custom] == [1, 2, 3, 4]
    assert [e["action"] for e in custom] == ACTIONS
    assert custom[2]["observation"] == "(Result 1 / 1) Wood was born in Poughkeepsie, New York."
    assert custom[-1]["status"] == "finished"
    assert [next(iter(u)) for u in updates[:4]] == ["reason", "parse", "act", "observe"]


def test_async_stream(wiki: MemorySource) -> None:
    async def collect() -> list[dict]:
        graph = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
        return [c async for c in graph.astream({"question": QUESTION}, stream_mode="custom")]

    assert [e["action"] for e in asyncio.run(collect())] == ACTIONS


def test_agent_as_a_node_of_a_parent_graph(wiki: MemorySource) -> None:
    agent = build_graph(model=ScriptedChatModel(outputs=GOOD_RUN), wiki=wiki)
    questions = [QUESTION, "Are Ed Wood and Scott Derrickson both American?", "Same nationality?"]
    out = build_pipeline(agent).invoke({"questions": questions, "answers": {}})
    assert set(out) == {"questions", "answers"}
    assert out["questions"] == questions  # not duplicated
    assert out["answers"] == {q: "yes" for q in questions}
