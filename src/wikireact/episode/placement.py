"""Each setting in its place: an agent's input fields in the input, `Context`'s in the context.

An agent's own settings (Plan-and-Execute's `max_subgoals`, Reflexion's `max_trials`, ...)
are fields of its input schema, kept with the thread; the run settings every agent shares
(`max_steps`, `model`, ...) are `Context`'s. LangGraph drops an input key its schema does not
have, and `Context.read` ignores a key it does not know, so a setting given in the wrong
place would be lost without a word: the door refuses it in one line naming where it belongs.
So is a `Context` field in `config["configurable"]` (LangGraph's habit before `context=`),
unless the context gives it too: the LangGraph server mirrors a run's context there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables.config import var_child_runnable_config

from wikireact.context import FIELD_NAMES, Context
from wikireact.errors import ConfigurationError


def input_fields(schema: Any) -> frozenset[str]:
    """Return the keys of an input schema (a TypedDict; none for anything else)."""
    required: frozenset[str] = getattr(schema, "__required_keys__", frozenset())
    optional: frozenset[str] = getattr(schema, "__optional_keys__", frozenset())
    return frozenset(required) | frozenset(optional)


def check_placement(input: Any, context: Any, fields: frozenset[str]) -> None:
    """Refuse an input field (`fields`) given in a context dict, or a `Context` field in the input.

    Raises `ConfigurationError` with one line naming where the setting belongs.
    """
    if isinstance(context, Mapping):
        for key in context:
            if key in fields and key not in FIELD_NAMES:
                raise ConfigurationError(
                    f"{key} is an input field of this agent, not a context setting: give it "
                    f'in the input ({{"question": ..., "{key}": ...}})'
                )
    if isinstance(input, Mapping):
        for key in input:
            if key in FIELD_NAMES and key not in fields:
                raise ConfigurationError(
                    f"{key} is a context setting, not an input field: give it in the context "
                    f'(context={{"{key}": ...}})'
                )


def check_configurable(config: Mapping[str, Any] | None, context: Any) -> None:
    """Refuse a `Context` setting in `config["configurable"]` that the context does not give.

    Not inside a parent's run: its configurable, passed down, was checked at its own door.
    Raises `ConfigurationError` with one line naming `context=`.
    """
    if var_child_runnable_config.get() is not None:
        return
    configurable = (config or {}).get("configurable") or {}
    if isinstance(context, Context):
        given: Any = context.given
    elif isinstance(context, Mapping):
        given = context
    else:
        given = {name for name in FIELD_NAMES if hasattr(context, name)}
    for key in configurable:
        if key in FIELD_NAMES and key not in given:
            raise ConfigurationError(
                f'{key} in config["configurable"] would be ignored: run settings are read '
                f'from the context; give context={{"{key}": ...}}'
            )
