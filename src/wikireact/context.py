"""Run settings for an episode, read by the nodes through `Runtime[Context]`.

Every field has a default taken from an environment variable, so `graph.invoke` works
without passing a context, and LangGraph Studio shows the fields (with these
descriptions) as its configuration form.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from wikireact.protocol import valid_unicode

DEFAULT_MODEL = "groq:qwen/qwen3.6-27b"
DEFAULT_MAX_STEPS = 7
"""The paper's step budget on HotpotQA."""
PROTOCOLS = ("text", "tools")
LOCAL_HAS_NO_TOOLS = (
    "the local model (Gemma 3 270M) has no tool calling; use --protocol text with it, "
    "or a model that calls tools (e.g. groq:qwen/qwen3.6-27b)"
)
MAX_QUESTION_CHARS = 2000


def _env(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


def env_flag(name: str) -> bool:
    """Read a yes/no environment variable: 1/true/yes/on or 0/false/no/off, any case; unset is no.

    Raises ValueError (one line) for anything else, rather than guessing.
    """
    raw = os.environ.get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(f"{name} must be 1/true/yes/on or 0/false/no/off, got {os.environ[name]!r}")


@dataclass(kw_only=True)
class Context:
    """The settings of one ReAct episode."""

    model: str = field(
        default_factory=lambda: _env("WIKIREACT_MODEL", DEFAULT_MODEL),
        metadata={
            "description": "Chat model as provider:model, e.g. groq:qwen/qwen3.6-27b, "
            "local (offline Gemma 3 270M) or scripted:FILE.json. Env: WIKIREACT_MODEL."
        },
    )
    wiki: str = field(
        default_factory=lambda: _env("WIKIREACT_WIKI", "live"),
        metadata={
            "description": "Wikipedia source: live (MediaWiki API, cached), offline "
            "(embedded snapshot), record:PATH.db (live, saved to a snapshot) or a "
            "snapshot PATH.db. Env: WIKIREACT_WIKI."
        },
    )
    max_steps: int = field(
        default_factory=lambda: _env_int("WIKIREACT_MAX_STEPS", DEFAULT_MAX_STEPS),
        metadata={
            "description": "Step budget; the paper uses 7 on HotpotQA. Env: WIKIREACT_MAX_STEPS."
        },
    )
    repetition_limit: int = field(
        default_factory=lambda: _env_int("WIKIREACT_REPETITION_LIMIT", 3),
        metadata={
            "description": "The n-th identical action ends the episode as repetition_halted. "
            "Env: WIKIREACT_REPETITION_LIMIT."
        },
    )
    observation_cap: int = field(
        default_factory=lambda: _env_int("WIKIREACT_OBSERVATION_CAP", 1000),
        metadata={
            "description": "Maximum characters of one observation before it is truncated "
            "with a visible marker. Env: WIKIREACT_OBSERVATION_CAP."
        },
    )
    approve: bool = field(
        default_factory=lambda: env_flag("WIKIREACT_APPROVE"),
        metadata={
            "description": "Pause before every Search/Lookup for human approval "
            "(resume with approve, an edited action, or a rejection). Env: WIKIREACT_APPROVE."
        },
    )
    method: Literal["react", "act"] = field(
        default="react",
        metadata={
            "description": "react: Thought + Action per step; act: actions only (the paper's Act baseline)."
        },
    )

    protocol: Literal["text", "tools"] = field(
        default_factory=lambda: _env("WIKIREACT_PROTOCOL", "text"),  # type: ignore[arg-type, return-value]
        metadata={
            "description": "text: the paper's Thought/Action lines, parsed by wikireact (any model); "
            "tools: native tool calls search/lookup/finish (models with tool calling). "
            "Env: WIKIREACT_PROTOCOL."
        },
    )

    def __post_init__(self) -> None:
        """Reject settings that cannot run, with a one-line reason."""
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {self.max_steps}")
        if self.repetition_limit < 2:
            raise ValueError(f"repetition_limit must be at least 2, got {self.repetition_limit}")
        if self.observation_cap < 50:
            raise ValueError(f"observation_cap must be at least 50, got {self.observation_cap}")
        if self.method not in ("react", "act"):
            raise ValueError(f"method must be react or act, got {self.method!r}")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be text or tools, got {self.protocol!r}")
        if self.protocol == "tools" and self.model.strip().split(":")[0] == "local":
            raise ValueError(LOCAL_HAS_NO_TOOLS)

    def as_dict(self) -> dict[str, Any]:
        """Return the settings as a plain dict (stored with a thread so `resume` can reuse them)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def validate_question(question: object) -> str:
    """Return the question stripped (invalid Unicode replaced), or raise ValueError with a one-line reason."""
    if not isinstance(question, str):
        raise ValueError("the question must be text")
    text = valid_unicode(question).strip()
    if not text:
        raise ValueError("the question is empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise ValueError(
            f"the question is {len(text)} characters long; the limit is {MAX_QUESTION_CHARS}"
        )
    return text
