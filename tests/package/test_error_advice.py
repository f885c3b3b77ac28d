"""Errors give advice in the words of the surface that raised them: library calls name
arguments (`build_graph(model=...)`, `Context(...)`), the CLI names its options."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from support import QUESTION, flat
from typer.testing import CliRunner

from wikireact import Context, build_graph
from wikireact.cli.app import app
from wikireact.errors import (
    ConfigurationError,
    MissingApiKeyError,
    ModelConfigurationError,
    PromptFileError,
)
from wikireact.graph import graph
from wikireact.prompting.exemplars import load_prompts
from wikireact.wiki.memory import MemorySource

CLI_OPTIONS = ("--model", "--offline", "--protocol", "--wiki")


def assert_library_words(message: str) -> None:
    """The message names no CLI option."""
    assert not [option for option in CLI_OPTIONS if option in message], message


def test_missing_key_from_graph_invoke_names_library_arguments(wiki: MemorySource) -> None:
    with pytest.raises(MissingApiKeyError) as caught:
        graph.invoke(
            {"question": QUESTION}, context=Context(model="groq:qwen/qwen3.6-27b", wiki="offline")
        )
    message = str(caught.value)
    assert_library_words(message)
    assert "GROQ_API_KEY" in message
    assert 'Context(model="local", wiki="offline")' in message
    assert "build_graph(model=" in message


def test_missing_key_from_build_graph_names_library_arguments() -> None:
    with pytest.raises(MissingApiKeyError) as caught:
        build_graph(model="groq:qwen/qwen3.6-27b").invoke({"question": QUESTION})
    assert_library_words(str(caught.value))


def test_missing_key_on_the_cli_names_its_options() -> None:
    result = CliRunner().invoke(app, ["ask", QUESTION, "--model", "groq:qwen/qwen3.6-27b"])
    assert result.exit_code == 2
    assert "--offline" in flat(result.stderr) and "--model" in flat(result.stderr)
    assert "Context(" not in flat(result.stderr)


def test_local_model_with_tools_protocol_names_the_setting_in_each_surface() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Context(model="local", protocol="tools")
    assert_library_words(str(caught.value))
    assert 'protocol="text"' in str(caught.value)
    result = CliRunner().invoke(app, ["ask", QUESTION, "--offline", "--protocol", "tools"])
    assert result.exit_code == 2 and "--protocol text" in flat(result.stderr)


def test_a_model_without_tool_calling_names_the_setting(wiki: MemorySource) -> None:
    model = FakeListChatModel(responses=["Thought: x\nAction: Finish[yes]"])
    with pytest.raises(ModelConfigurationError) as caught:
        build_graph(model=model, wiki=wiki).invoke(
            {"question": QUESTION}, context={"protocol": "tools"}
        )
    assert_library_words(str(caught.value))
    assert 'protocol="text"' in str(caught.value)


def test_an_error_keeps_both_wordings_across_processes() -> None:
    error = MissingApiKeyError("library advice", cli="cli advice")
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == "library advice" and copy.cli == "cli advice"


def test_a_prompt_file_without_the_needed_key_names_the_argument(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({"mine": "Question: q\nAnswer: a"}))
    with pytest.raises(PromptFileError) as caught:
        load_prompts(prompts, ["react"])
    assert "load_prompts(keys=...)" in str(caught.value)
    assert caught.value.cli is not None and "--prompts-key" in caught.value.cli
