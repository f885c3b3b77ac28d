"""`--help` in the conventions of Click (and `gh`, `uv`): `QUESTION` in usage lines, `INTEGER`, `[a|b]`.

Typer's own plain help writes required arguments as `{QUESTION}` and types as `<int>`,
`<str>`, `<bool>`; these classes restore Click's conventions. Help text is never read
as Rich markup (the app uses `rich_markup_mode=None`), so `[default: ...]` stays visible.
Contexts, parameters and formatters are typed `Any`: Typer 0.29 subclasses a vendored
copy of Click (`typer._click`), not the `click` package.
"""

from __future__ import annotations

import re
from typing import Any

from typer.core import TyperCommand, TyperGroup

_TYPE_NAMES = {"int": "INTEGER", "str": "TEXT", "float": "FLOAT", "path": "PATH", "bool": "BOOLEAN"}


def _click_type_name(match: re.Match[str]) -> str:
    label = match.group(1)
    if "|" in label:
        return f"[{label}]"
    return _TYPE_NAMES.get(label, label.upper())


def argument_name(param: Any) -> str:
    """Return an argument as usage lines write it: `QUESTION`, `DIR...`, `[NAME]`."""
    name = param.metavar or (param.name or "").upper()
    if param.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if param.required else f"[{name}]"


class HelpCommand(TyperCommand):
    """A Typer command whose help follows Click's conventions."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """Return `[OPTIONS]` and the arguments' names, e.g. `QUESTION`."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                pieces.append(argument_name(param))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """Write the Arguments and Options sections."""
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((argument_name(param).strip("[]"), record[1]))
            else:
                options.append((re.sub(r"<([^<>]+)>", _click_type_name, record[0]), record[1]))
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options)


class EvalGroup(TyperGroup):
    """`eval DATASET [OPTIONS]` is short for `eval run DATASET [OPTIONS]`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Insert `run` unless the first argument names a subcommand or asks for help."""
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["run", *args]
        return super().parse_args(ctx, args)
