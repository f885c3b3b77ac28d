"""Run settings for an episode, read by the nodes through `Runtime[Context]`.

Every field has a default taken from an environment variable, so `graph.invoke` works
without passing a context, and LangGraph Studio shows the fields (with these
descriptions) as its configuration form.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from wikireact.errors import ConfigurationError, ModelConfigurationError
from wikireact.protocols.text import valid_unicode

DEFAULT_MODEL = "groq:qwen/qwen3.6-27b"
DEFAULT_MAX_STEPS = 7
"""The paper's step budget on HotpotQA."""
DEFAULT_REPETITION_LIMIT = 3
"""The third identical action in one state ends the episode."""
DEFAULT_OBSERVATION_CAP = 1000
"""Characters of one observation before it is truncated."""
DEFAULT_KEEP_OBSERVATIONS = 3
"""Latest observations sent in full when older ones are cleared to fit the context window."""
MAX_STEPS = 5_000
"""The largest step budget: a prompt holds every earlier step, fitted to the model's context
window by clearing older observations (`wikireact.prompting.fitting`)."""
SUPERSTEPS_PER_STEP = 4
"""LangGraph supersteps one ReAct step may take: reason, parse, act, observe (3 without act)."""
RECURSION_LIMIT = SUPERSTEPS_PER_STEP * MAX_STEPS + 10
"""LangGraph supersteps an invocation may take: at most 4 per step (reason, parse, act, observe)."""
PROTOCOLS = ("text", "tools")
Task = Literal["hotpotqa", "fever"]
"""What an episode does: answer a HotpotQA-style question, or label a FEVER claim."""
TASKS: tuple[Task, ...] = ("hotpotqa", "fever")


def no_tool_calling(model: str, alternative: str = "") -> ModelConfigurationError:
    """Return the refusal of the tools protocol for `model`, in the library's and the CLI's words."""
    return ModelConfigurationError(
        f'{model} has no tool calling; use Context(protocol="text") with it{alternative}',
        cli=f"{model} has no tool calling; use --protocol text with it{alternative}",
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


def read_flag(name: str, value: object) -> bool:
    """Read a yes/no value as the env fallback does: 1/true/yes/on or 0/false/no/off, any case.

    Booleans pass; so do the integers 0 and 1. Raises `ConfigurationError` (one line naming
    `name`) for anything else, rather than guessing: `"false"` is not true.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raw = value.strip().lower() if isinstance(value, str) else None
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ConfigurationError(f"{name} must be 1/true/yes/on or 0/false/no/off, got {value!r}")


def read_int(name: str, value: object) -> int:
    """Read a whole number given as a number or as text (`"7"`); raise one line naming `name`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise ConfigurationError(f"{name} must be a whole number, got {value!r}")


def env_flag(name: str, default: bool = False) -> bool:
    """Read a yes/no environment variable: 1/true/yes/on or 0/false/no/off, any case.

    Unset (or empty) is `default`. Raises ValueError (one line) for anything else, rather than guessing.
    """
    return read_flag(name, os.environ.get(name, "") or ("on" if default else ""))


def _shows_default(name: str) -> Callable[[dict[str, Any]], None]:
    """Return a JSON-schema hook that shows the field's default as resolved now (env included)."""

    def add_default(schema: dict[str, Any]) -> None:
        try:
            schema["default"] = getattr(Context(), name)
        except ValueError:  # a bad environment variable: no default to show
            pass

    return add_default


@dataclass(kw_only=True)
class Context:
    """The settings of one ReAct episode."""

    model: str = field(
        default_factory=lambda: _env("WIKIREACT_MODEL", DEFAULT_MODEL),
        metadata={
            "json_schema_extra": _shows_default("model"),
            "description": "Chat model as provider:model, e.g. groq:qwen/qwen3.6-27b, "
            "local (offline Gemma 3 270M) or scripted:FILE.json. Env: WIKIREACT_MODEL.",
        },
    )
    wiki: str = field(
        default_factory=lambda: _env("WIKIREACT_WIKI", "live"),
        metadata={
            "json_schema_extra": _shows_default("wiki"),
            "description": "Wikipedia source: live (MediaWiki API, cached), offline "
            "(embedded snapshot), record:PATH.db (live, saved to a snapshot) or a "
            "snapshot PATH.db. Env: WIKIREACT_WIKI.",
        },
    )
    max_steps: int = field(
        default_factory=lambda: _env_int("WIKIREACT_MAX_STEPS", DEFAULT_MAX_STEPS),
        metadata={
            "ge": 1,
            "json_schema_extra": _shows_default("max_steps"),
            "description": "Step budget; the paper uses 7 on HotpotQA. Env: WIKIREACT_MAX_STEPS.",
        },
    )
    repetition_limit: int = field(
        default_factory=lambda: _env_int("WIKIREACT_REPETITION_LIMIT", DEFAULT_REPETITION_LIMIT),
        metadata={
            "ge": 2,
            "json_schema_extra": _shows_default("repetition_limit"),
            "description": "The n-th identical action ends the episode as repetition_halted. "
            "Env: WIKIREACT_REPETITION_LIMIT.",
        },
    )
    observation_cap: int = field(
        default_factory=lambda: _env_int("WIKIREACT_OBSERVATION_CAP", DEFAULT_OBSERVATION_CAP),
        metadata={
            "ge": 50,
            "json_schema_extra": _shows_default("observation_cap"),
            "description": "Maximum characters of one observation before it is truncated "
            "with a visible marker. Env: WIKIREACT_OBSERVATION_CAP.",
        },
    )
    context_tokens: int = field(
        default_factory=lambda: _env_int("WIKIREACT_CONTEXT_TOKENS", 0),
        metadata={
            "ge": 0,
            "json_schema_extra": _shows_default("context_tokens"),
            "description": "The model's context window in tokens; 0: the model's own (a local "
            "model's n_ctx, a known provider model's). Older observations are cleared from "
            "the prompt to fit it. Env: WIKIREACT_CONTEXT_TOKENS.",
        },
    )
    keep_observations: int = field(
        default_factory=lambda: _env_int("WIKIREACT_KEEP_OBSERVATIONS", DEFAULT_KEEP_OBSERVATIONS),
        metadata={
            "ge": 1,
            "json_schema_extra": _shows_default("keep_observations"),
            "description": "Latest observations always sent in full when older ones are "
            "cleared to fit the context window. Env: WIKIREACT_KEEP_OBSERVATIONS.",
        },
    )
    max_model_calls: int = field(
        default_factory=lambda: _env_int("WIKIREACT_MAX_MODEL_CALLS", 0),
        metadata={
            "ge": 0,
            "json_schema_extra": _shows_default("max_model_calls"),
            "description": "Model calls an episode may make (nested episodes included); 0: no "
            "limit. Env: WIKIREACT_MAX_MODEL_CALLS.",
        },
    )
    max_input_tokens: int = field(
        default_factory=lambda: _env_int("WIKIREACT_MAX_INPUT_TOKENS", 0),
        metadata={
            "ge": 0,
            "json_schema_extra": _shows_default("max_input_tokens"),
            "description": "Prompt tokens an episode may send in all; 0: no limit. "
            "Env: WIKIREACT_MAX_INPUT_TOKENS.",
        },
    )
    max_output_tokens: int = field(
        default_factory=lambda: _env_int("WIKIREACT_MAX_OUTPUT_TOKENS", 0),
        metadata={
            "ge": 0,
            "json_schema_extra": _shows_default("max_output_tokens"),
            "description": "Reply tokens an episode may receive in all; 0: no limit. "
            "Env: WIKIREACT_MAX_OUTPUT_TOKENS.",
        },
    )
    approve: bool = field(
        default_factory=lambda: env_flag("WIKIREACT_APPROVE"),
        metadata={
            "json_schema_extra": _shows_default("approve"),
            "description": "Pause before every Search/Lookup for human approval "
            "(resume with approve, an edited action, or a rejection). Env: WIKIREACT_APPROVE.",
        },
    )
    verify_finish: bool = field(
        default_factory=lambda: env_flag("WIKIREACT_VERIFY_FINISH", default=True),
        metadata={
            "json_schema_extra": _shows_default("verify_finish"),
            "description": "A Finish whose answer appears in no observation is sent back once "
            "(one step) before it ends the episode; finishing again with it ends it unsupported. "
            "Off in eval for the paper's methods. Env: WIKIREACT_VERIFY_FINISH (default on).",
        },
    )
    known_titles: bool = field(
        default_factory=lambda: env_flag("WIKIREACT_KNOWN_TITLES", default=True),
        metadata={
            "json_schema_extra": _shows_default("known_titles"),
            "description": "A local model over a snapshot searches only titles the snapshot "
            "holds: its Search is decoded under them (the latest miss's Similar: titles "
            "first). No effect on live Wikipedia or a provider's model. "
            "Env: WIKIREACT_KNOWN_TITLES (default on).",
        },
    )
    method: Literal["react", "act"] = field(
        default="react",
        metadata={
            "description": "react: Thought + Action per step; act: actions only (the paper's Act baseline)."
        },
    )

    task: Task = field(
        default_factory=lambda: _env("WIKIREACT_TASK", "hotpotqa"),  # type: ignore[arg-type, return-value]
        metadata={
            "json_schema_extra": _shows_default("task"),
            "description": "hotpotqa: answer the question with a short phrase; fever: the input "
            "is a claim, and Finish takes one of SUPPORTS, REFUTES, NOT ENOUGH INFO. "
            "Env: WIKIREACT_TASK.",
        },
    )
    protocol: Literal["text", "tools"] = field(
        default_factory=lambda: _env("WIKIREACT_PROTOCOL", "text"),  # type: ignore[arg-type, return-value]
        metadata={
            "json_schema_extra": _shows_default("protocol"),
            "description": "text: the paper's Thought/Action lines, parsed by wikireact (any model); "
            "tools: native tool calls search/lookup/finish (models with tool calling). "
            "Env: WIKIREACT_PROTOCOL.",
        },
    )

    def __new__(cls, **given: Any) -> Context:
        """Remember which fields the caller gave (`given`): a resume changes only those."""
        context = super().__new__(cls)
        object.__setattr__(context, "_given", frozenset(given))
        return context

    def __post_init__(self) -> None:
        """Read text values (`"7"`, `"no"`), then reject settings that cannot run, with a one-line reason."""
        self._read_values()
        for name in (*NUMBER_FIELDS, *LIMIT_FIELDS):
            if getattr(self, name) < least(name):
                raise ValueError(
                    f"{name} must be at least {least(name)}, got {getattr(self, name)}"
                )
        if self.max_steps > MAX_STEPS:
            raise ValueError(f"max_steps must be at most {MAX_STEPS}, got {self.max_steps}")
        if self.method not in ("react", "act"):
            raise ValueError(f"method must be react or act, got {self.method!r}")
        if self.task not in TASKS:
            raise ValueError(f"task must be hotpotqa or fever, got {self.task!r}")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be text or tools, got {self.protocol!r}")
        if self.protocol == "tools" and self.model.strip().split(":")[0] == "local":
            raise no_tool_calling(
                "the local model (Gemma 3 270M)",
                ", or a model that calls tools (e.g. groq:qwen/qwen3.6-27b)",
            )

    def _read_values(self) -> None:
        for name in TEXT_FIELDS:
            if not isinstance(getattr(self, name), str):
                raise ConfigurationError(f"{name} must be text, got {getattr(self, name)!r}")
        for name in (*NUMBER_FIELDS, *LIMIT_FIELDS):
            setattr(self, name, read_int(name, getattr(self, name)))
        self.approve = read_flag("approve", self.approve)
        self.verify_finish = read_flag("verify_finish", self.verify_finish)
        self.known_titles = read_flag("known_titles", self.known_titles)

    @property
    def given(self) -> frozenset[str]:
        """The fields the caller gave (the others are defaults); all of them for a copy."""
        return getattr(self, "_given", frozenset(FIELD_NAMES))

    @classmethod
    def read(cls, value: object) -> Context:
        """Return the run settings a context value gives; fields it lacks take their defaults.

        `value` is a `Context`, None (all defaults), a dict (a name close to a field's is
        refused as a typo; others are ignored), or a foreign object, e.g. a parent graph's
        own context, whose attributes named like our fields are taken.
        """
        if value is None:
            return cls()
        if isinstance(value, Context):
            return value
        if isinstance(value, Mapping):
            for key in value:
                close = [] if key in FIELD_NAMES else _close_field(str(key))
                if close:
                    raise ConfigurationError(f"unknown setting {key!r} (did you mean {close[0]}?)")
            given = {name: value[name] for name in FIELD_NAMES if name in value}
        else:
            given = {name: getattr(value, name) for name in FIELD_NAMES if hasattr(value, name)}
        try:
            return cls(**given)
        except ValueError as exc:  # a range check: one line, as a ConfigurationError
            raise ConfigurationError(str(exc)) from None

    def as_dict(self) -> dict[str, Any]:
        """Return the settings as a plain dict (stored with a thread so `resume` can reuse them)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Context))
TEXT_FIELDS = ("model", "wiki")
LIMIT_FIELDS = (
    "context_tokens",
    "keep_observations",
    "max_model_calls",
    "max_input_tokens",
    "max_output_tokens",
)
"""The context window and the budgets beside the steps (`wikireact.episode.budgets`); whole
numbers, read and range-checked like `NUMBER_FIELDS` (which `eval run` takes as options)."""
NUMBER_FIELDS = ("max_steps", "repetition_limit", "observation_cap")


def least(name: str) -> int:
    """Return the smallest value of the number field `name` (its `ge`, Studio's minimum too)."""
    return int(_FIELDS[name].metadata["ge"])


_FIELDS = {f.name: f for f in fields(Context)}


def _close_field(key: str) -> list[str]:
    """Return the field a foreign key probably meant (a typo), if any."""
    return difflib.get_close_matches(key, FIELD_NAMES, n=1, cutoff=0.8)


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
