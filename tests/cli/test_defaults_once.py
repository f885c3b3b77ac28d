"""Defaults and limits are written once, in `Context`: the CLI and the evaluation derive theirs.

A copy of a default (`= 3` in a typer option, in `EvalConfig`) or of a minimum that drifts
from `Context` fails here, naming the field.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest
import typer

from wikireact.cli.app import app
from wikireact.context import NUMBER_FIELDS, Context, least
from wikireact.errors import EvalError
from wikireact.eval.harness import EvalConfig


def command(*path: str) -> Any:
    found: Any = typer.main.get_command(app)
    for name in path:
        found = found.commands[name]
    return found


def option_default(cmd: Any, name: str) -> object:
    (param,) = [p for p in cmd.params if p.name == name]
    return param.default


@pytest.fixture
def builtin() -> Context:
    """`Context`'s defaults as no environment variable changes them (data_dir clears them)."""
    return Context()


@pytest.mark.parametrize("name", NUMBER_FIELDS)
def test_eval_takes_contexts_defaults(name: str, builtin: Context, data_dir: object) -> None:
    expected = getattr(builtin, name)
    assert option_default(command("eval", "run"), name) == expected, name
    config_defaults = {f.name: f.default for f in fields(EvalConfig)}
    assert config_defaults[name] == expected, name


@pytest.mark.parametrize("name", NUMBER_FIELDS)
def test_the_minimum_is_contexts_everywhere(name: str, tmp_path: object) -> None:
    smallest = least(name)
    Context(**{name: smallest})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"{name} must be at least {smallest}"):
        Context(**{name: smallest - 1})  # type: ignore[arg-type]
    base = {"dataset": "d.json", "method": "react", "model": "scripted:x.json", "wiki": "offline"}
    EvalConfig(**base, **{name: smallest})  # type: ignore[arg-type]
    flag = "--" + name.replace("_", "-")
    with pytest.raises(EvalError, match=f"{flag} must be at least {smallest}"):
        EvalConfig(**base, **{name: smallest - 1})  # type: ignore[arg-type]


def test_ask_and_resume_read_the_step_budget_from_context() -> None:
    # `ask`/`resume` leave unset options None: Context (its environment variable, then its
    # default) decides, so they hold no copy to drift.
    for name in ("ask", "resume"):
        assert option_default(command(name), "max_steps") is None
