"""Tiny GGUF models written by the `gguf` package, for tests of `--model local:PATH.gguf`.

`write_tiny_model` writes a complete llama-architecture model (about 60 KB) that llama.cpp
loads and runs in milliseconds. Its weights are chosen, not trained: every layer adds
nothing, every token has the same embedding, so the model always ranks the vocabulary the
same way: newline first, then `]`, then the letters in `PREFERENCE`. Under the step grammar
it therefore writes short, well-formed steps. `write_header_only` writes a header that
declares a large model (no weights), for what is read from headers alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

gguf = pytest.importorskip("gguf")
import numpy as np  # noqa: E402  (a dependency of gguf)

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
PREFERENCE = "\n]SLFearchookupinishTh OAbsvtdgmcly1234567890:.,'-"
"""The order in which the tiny model prefers its characters (then every other token)."""
N_EMBD, N_FF, N_HEAD = 16, 32, 2


def _vocabulary() -> tuple[list[str], list[int], list[float]]:
    """SentencePiece-style tokens: control tokens, the 256 bytes, then single characters."""
    pieces = [("▁" if c == " " else c) for c in dict.fromkeys(PREFERENCE)]
    pieces += [
        c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ?!()" if c not in pieces
    ]
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256)), *pieces]
    types = [2, 3, 3, *([6] * 256), *([1] * len(pieces))]
    scores = [0.0, 0.0, 0.0, *([-1000.0] * 256), *(-float(i) for i in range(len(pieces)))]
    return tokens, types, scores


def _metadata(w: Any, *, template: str | None, context_length: int) -> None:
    w.add_name("tiny-test-model")
    w.add_context_length(context_length)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(1)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    tokens, types, scores = _vocabulary()
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    if template is not None:
        w.add_chat_template(template)


def write_tiny_model(
    path: Path, *, template: str | None = TEMPLATE, context_length: int = 8192
) -> Path:
    """Write a complete tiny model to `path` (see the module docstring) and return `path`."""
    tokens, _, _ = _vocabulary()
    writer = gguf.GGUFWriter(str(path), "llama")
    _metadata(writer, template=template, context_length=context_length)
    zeros = lambda *shape: np.zeros(shape, np.float32)  # noqa: E731
    output = np.zeros((len(tokens), N_EMBD), np.float32)
    for rank, char in enumerate(dict.fromkeys(PREFERENCE)):
        output[tokens.index("▁" if char == " " else char)] = 1.0 - rank / 100
    writer.add_tensor("token_embd.weight", np.ones((len(tokens), N_EMBD), np.float32))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, np.float32))
    writer.add_tensor("output.weight", output)
    writer.add_tensor("blk.0.attn_norm.weight", np.ones(N_EMBD, np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        writer.add_tensor(f"blk.0.{name}.weight", zeros(N_EMBD, N_EMBD))
    writer.add_tensor("blk.0.ffn_norm.weight", np.ones(N_EMBD, np.float32))
    writer.add_tensor("blk.0.ffn_gate.weight", zeros(N_FF, N_EMBD))
    writer.add_tensor("blk.0.ffn_up.weight", zeros(N_FF, N_EMBD))
    writer.add_tensor("blk.0.ffn_down.weight", zeros(N_EMBD, N_FF))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def write_header_only(path: Path, parameters: int) -> Path:
    """Write the header of a model with `parameters` parameters (and no weights) to `path`."""
    writer = gguf.GGUFWriter(str(path), "llama")
    _metadata(writer, template=TEMPLATE, context_length=8192)
    writer.add_tensor_info(
        "token_embd.weight", (parameters // N_EMBD, N_EMBD), np.dtype(np.float32), 0
    )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    with path.open("ab") as file:
        file.write(b"\0" * 64)  # a first weight byte: only the header is read
    return path
