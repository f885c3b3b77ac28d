"""Model and Wikipedia faults against local stand-in servers: episodes still end cleanly."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
import requests
from fake_mediawiki import FakeMediaWiki
from fault_server import FaultServer, Reply, chat_completion, every_third_of_ten, json_reply
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr
from support import GOOD_RUN, PAGES, QUESTION, thread

from wikireact import MemorySource, build_graph
from wikireact.errors import WikiOutageError
from wikireact.models.registry import MODEL_MAX_RETRIES
from wikireact.models.scripted import ScriptOutput
from wikireact.state import InputState
from wikireact.wiki.live import LiveSource, Transport

pytestmark = pytest.mark.slow


def chat_reply(
    method: str, path: str, query: dict[str, str], body: bytes
) -> tuple[int, dict, bytes]:
    """An OpenAI-compatible chat completion that replays GOOD_RUN by step number."""
    assert path == "/openai/v1/chat/completions"
    messages = json.loads(body)["messages"]
    start = max(i for i, m in enumerate(messages) if str(m["content"]).startswith("Question: "))
    step = sum(1 for m in messages[start:] if m["role"] == "assistant")
    return chat_completion({"role": "assistant", "content": GOOD_RUN[step]}, "stop", 100)


def test_model_faults_are_retried_by_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_groq import ChatGroq

    kinds = ["429-retry-after", "429", "500", "503", "slow"]
    with FaultServer(chat_reply, every_third_of_ten(kinds), slow_s=1.5) as server:
        model = ChatGroq(
            model="qwen/qwen3.6-27b",
            api_key=SecretStr("test-key"),
            base_url=server.url,
            timeout=1.0,
            max_retries=MODEL_MAX_RETRIES,
            temperature=0,
        )
        graph = build_graph(model=model, wiki=MemorySource(PAGES))
        outs = [graph.invoke({"question": QUESTION}) for _ in range(4)]
    assert all(o["status"] == "finished" and o["answer"] == "yes" for o in outs)
    assert all(
        [s["action"] for s in o["trajectory"]]
        == ["Search[Scott Derrickson]", "Search[Ed Wood]", "Lookup[born]", "Finish[yes]"]
        for o in outs
    )
    assert sum(server.injected.values()) >= 6 and set(server.injected) == set(kinds)
    assert outs[0]["usage"][0]["input_tokens"] == 100


def mediawiki_reply(wiki: FakeMediaWiki) -> Callable[[str, str, dict[str, str], bytes], Reply]:
    def respond(method: str, path: str, query: dict[str, str], body: bytes) -> Reply:
        return json_reply(wiki.reply(query))

    return respond


def test_wikipedia_faults_end_in_results_or_a_resumable_stop() -> None:
    """Faults are retried; an outage that outlasts the retries stops the episode resumably."""
    wiki = FakeMediaWiki(pages=dict(PAGES), search_results={"Ed Woody": ["Ed Wood"]})
    kinds = ["429-retry-after", "429", "500", "slow", "truncated", "html"]
    timeout_s = 0.5
    durations: list[float] = []

    class TimedSession(requests.Session):
        def get(self, *args: Any, **kwargs: Any) -> requests.Response:
            start = time.perf_counter()
            try:
                return super().get(*args, **kwargs)
            finally:
                durations.append(time.perf_counter() - start)

    from wikireact import ScriptedChatModel

    script: list[ScriptOutput] = [
        "Action: Search[Scott Derrickson]",
        "Action: Search[Ed Woody]",
        "Action: Search[Ed Wood]",
        "Action: Lookup[born]",
        "Action: Finish[yes]",
    ]
    with FaultServer(mediawiki_reply(wiki), every_third_of_ten(kinds), slow_s=2.0) as server:
        transport = Transport(
            f"{server.url}/w/api.php",
            timeout_s=timeout_s,
            retries=3,
            backoff_s=0.05,
            session=TimedSession(),
        )
        graph = build_graph(
            InMemorySaver(), model=ScriptedChatModel(outputs=script), wiki=LiveSource(transport)
        )
        outs, stops = [], 0
        for n in range(6):
            config = thread(f"t{n}")
            payload: InputState | None = {"question": QUESTION}
            for _ in range(10):
                try:
                    outs.append(graph.invoke(payload, config))
                    break
                except WikiOutageError:
                    stops, payload = stops + 1, None
    assert len(outs) == 6 and all(o["status"] == "finished" for o in outs)
    for out in outs:
        assert [s["kind"] for s in out["trajectory"]] == ["executed"] * 4 + ["finish"]
        for step in out["trajectory"][:3]:
            assert step["observation"].startswith(
                ("Scott Derrickson", "Edward Davis", "Could not find Ed Woody")
            )
    assert sum(server.injected.values()) >= 5 and set(server.injected) >= {
        "429",
        "500",
        "slow",
        "truncated",
        "html",
    }
    assert max(durations) <= timeout_s + 1.0
