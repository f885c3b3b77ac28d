"""The local model streams its tokens: `stream_mode="messages"` shows a step as it is written.

`LlamaCppChatModel` writes a step token by token under the step grammar; streamed, each
piece arrives as its own message chunk, and the chunks add up to the message the same call
returns unstreamed (text and token counts). The CLI's live view shows the text being
written. With the tiny GGUF model the tests write (`tiny_gguf`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from support import PAGES, QUESTION, thread, write_snapshot
from tiny_gguf import write_tiny_model
from typer.testing import CliRunner

from wikireact import Context, MemorySource, build_graph
from wikireact.cli.app import app

pytest.importorskip("llama_cpp")


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_tiny_model(tmp_path / "tiny.gguf")


def test_streamed_chunks_add_up_to_the_unstreamed_message(tiny: Path) -> None:
    from wikireact.models.registry import load_chat_model

    model = load_chat_model(f"local:{tiny}")
    messages = [SystemMessage("Answer in steps."), HumanMessage(f"Question: {QUESTION}")]
    whole = model.invoke(messages, max_tokens=12)  # free text (no step prompt): 12 tokens
    chunks = list(model.stream(messages, max_tokens=12))
    assert len(chunks) > 3 and all(isinstance(c, AIMessageChunk) for c in chunks)
    streamed = chunks[0]
    for chunk in chunks[1:]:
        streamed += chunk
    assert streamed.content == whole.content and streamed.content
    assert streamed.usage_metadata == whole.usage_metadata


def test_messages_mode_streams_each_step_as_it_is_written(tiny: Path) -> None:
    from wikireact.models.registry import load_chat_model

    model = load_chat_model(f"local:{tiny}")
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    pieces: dict[int, list[str]] = {}
    for chunk, metadata in graph.stream(
        {"question": QUESTION}, thread(), context=Context(max_steps=2), stream_mode="messages"
    ):
        if metadata.get("langgraph_node") == "reason":
            assert isinstance(chunk, AIMessageChunk)
            pieces.setdefault(metadata["langgraph_step"], []).append(str(chunk.content))
    trajectory = graph.get_state(thread()).values["trajectory"]
    assert len(pieces) == len(trajectory) == 2
    for step, written in zip(trajectory, pieces.values(), strict=True):
        assert len(written) > 3  # several chunks per step, not one whole message
        assert "".join(written) == step["raw"]


def test_the_cli_shows_the_reply_as_it_is_written(
    tiny: Path, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import wikireact.cli.episode as episode

    shown: list[str] = []  # what the live status line was given, update by update
    writing = episode._writing

    def spy(text: str) -> Any:
        shown.append(text)
        return writing(text)

    monkeypatch.setattr(episode, "_writing", spy)
    snapshot = write_snapshot(tmp_path / "pages.db")
    args = [QUESTION, "--model", f"local:{tiny}", "--wiki", str(snapshot), "--max-steps", "1"]
    result = CliRunner().invoke(app, ["ask", *args])
    assert result.exit_code == 0, result.output
    assert len(shown) > 3 and all(b.startswith(a) for a, b in zip(shown, shown[1:], strict=False))
    assert shown[0] != shown[-1] and shown[-1].startswith("Thought 1: ")
    assert "\nAction 1: Search[" in shown[-1]  # the whole step, as then printed
    assert f"Action 1: {shown[-1].split('Action 1: ')[1]}" in result.stdout
