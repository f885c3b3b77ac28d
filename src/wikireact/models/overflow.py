"""Whether a model call failed because its prompt was longer than the model's context window.

Providers answer such a prompt with an HTTP 400 whose error code is
`context_length_exceeded` (Groq, OpenAI and compatible servers; others say "maximum context
length" or "prompt is too long"); llama.cpp raises `ValueError("Requested tokens (N) exceed
context window of M")`. Either way no retry helps: the episode ends `context_exhausted`.
"""

from __future__ import annotations

import re

_CODES = frozenset({"context_length_exceeded", "string_above_max_length"})
_WORDING = re.compile(
    r"context_length_exceeded|maximum context length|context window|prompt is too long|"
    r"reduce the length of the messages|exceed(?:s|ed)? (?:the )?context",
    re.IGNORECASE,
)
_LLAMA_CPP = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


def is_context_overflow(exc: BaseException) -> bool:
    """Return whether `exc` (or an error it was raised from) says the prompt is over the window."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if _says_overflow(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _says_overflow(exc: BaseException) -> bool:
    if isinstance(exc, ValueError) and _LLAMA_CPP.search(str(exc)):
        return True
    status = getattr(exc, "status_code", None)
    if status not in (400, 413) or not isinstance(exc, Exception):
        return False
    code = getattr(exc, "code", None)
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        code = code or (error.get("code") if isinstance(error, dict) else None)
    return code in _CODES or bool(_WORDING.search(str(exc)))
