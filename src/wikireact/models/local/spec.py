"""The local model strings: `local` (the embedded Gemma 3 270M) and `local:PATH.gguf` (your own)."""

from __future__ import annotations

import os
from pathlib import Path

from wikireact.errors import ModelConfigurationError

PREFIX = "local:"


def is_local(spec: str) -> bool:
    """Whether `spec` names a local llama.cpp model (`local` or `local:PATH.gguf`)."""
    spec = spec.strip()
    return spec == "local" or spec.startswith(PREFIX)


def local_path(spec: str) -> Path | None:
    """Return the GGUF file `local:PATH` names; None for `local`, the embedded model."""
    spec = spec.strip()
    if spec == "local":
        return None
    path = spec.removeprefix(PREFIX).strip()
    if not path:
        raise ModelConfigurationError(
            "local: needs the path of a GGUF file, e.g. local:/models/qwen2.5-3b-instruct-q4_k_m.gguf "
            "(or local alone for the embedded Gemma 3 270M)"
        )
    return Path(path).expanduser()


def absolute_local_spec(spec: str) -> str:
    """Return `local:PATH` with PATH absolute (threads keep their settings; resume works anywhere)."""
    path = local_path(spec) if is_local(spec) else None
    return spec if path is None else PREFIX + os.path.abspath(path)
