"""Which model failures stop an episode resumably, and which are bugs that keep their type.

An outage of the model (the network, a timeout, the provider's SDK, a model of wikireact's
own that cannot answer) becomes `ModelCallError`: the thread's checkpoint is resumed later.
A programming error in a model or its wrapper (a `TypeError`, a `KeyError`) is no outage:
resuming would meet it again, so it propagates with its own type and traceback.
"""

from __future__ import annotations

from collections.abc import Callable

import groq
import httpx
import pytest
import requests
from langgraph.checkpoint.memory import InMemorySaver
from support import GOOD_RUN, QUESTION, thread

from wikireact import MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import ModelCallError, ProviderError

GROQ_REQUEST = httpx.Request("POST", "https://api.groq.com/openai/v1/chat/completions")
OUTAGES: dict[str, Callable[[], BaseException]] = {
    "connection": lambda: ConnectionError("connection refused"),
    "timeout": lambda: TimeoutError("timed out"),
    "os": lambda: OSError(101, "Network is unreachable"),
    "httpx": lambda: httpx.ConnectTimeout("connect timed out", request=GROQ_REQUEST),
    "requests": lambda: requests.ConnectionError("Max retries exceeded"),
    "groq-connection": lambda: groq.APIConnectionError(request=GROQ_REQUEST),
    "groq-status": lambda: groq.InternalServerError(
        "server error", response=httpx.Response(503, request=GROQ_REQUEST), body=None
    ),
    "provider": lambda: ProviderError("the script holds no more replies"),
    "caused-by-transport": lambda: _caused_by(RuntimeError("call failed"), ConnectionError("x")),
}
BUGS: dict[str, Callable[[], BaseException]] = {
    "type": lambda: TypeError("wrap() got an unexpected keyword argument 'stop'"),
    "key": lambda: KeyError("choices"),
    "attribute": lambda: AttributeError("'NoneType' object has no attribute 'content'"),
    "value": lambda: ValueError("bad message list"),
}


def _caused_by(error: BaseException, cause: BaseException) -> BaseException:
    error.__cause__ = cause
    return error


@pytest.mark.parametrize("make", OUTAGES.values(), ids=OUTAGES.keys())
def test_an_outage_of_the_model_stops_the_episode_resumably(
    make: Callable[[], BaseException], wiki: MemorySource
) -> None:
    model = ScriptedChatModel(outputs=GOOD_RUN, errors={2: make()})
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    with pytest.raises(ModelCallError, match="did not answer step 3"):
        graph.invoke({"question": QUESTION}, thread())
    model.errors.clear()
    assert graph.invoke(None, thread())["answer"] == "yes"


@pytest.mark.parametrize("make", BUGS.values(), ids=BUGS.keys())
def test_a_bug_in_a_model_wrapper_propagates_with_its_type(
    make: Callable[[], BaseException], wiki: MemorySource
) -> None:
    error = make()
    model = ScriptedChatModel(outputs=GOOD_RUN, errors={2: error})
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    with pytest.raises(type(error)) as raised:
        graph.invoke({"question": QUESTION}, thread())
    assert not isinstance(raised.value, ModelCallError)
    assert raised.value is error  # the original, with its traceback
    assert graph.get_state(thread()).values["steps"] == 2  # the steps before it are kept
