"""The tools protocol: the actions as three native tools, and reading a reply's tool calls.

With `protocol="tools"` the model does not write `Action N: Verb[argument]`; it calls
`search(title)`, `lookup(keyword)` or `finish(answer)`. `parse_tool_calls` accepts exactly
one call per reply, with its one text argument, and turns anything else into a
`FormatError` (the step is `invalid`) with the same did-you-mean help as the text
protocol. Text beside the call is the step's thought. Never raises.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage
from typing_extensions import TypedDict

from wikireact.protocols.labels import LABELS, LABELS_SHOWN
from wikireact.protocols.text import (
    Action,
    ActionName,
    FormatError,
    ParsedOutput,
    cut_at_observation,
    make_action,
    valid_unicode,
)


class ToolCallRecord(TypedDict):
    """One tool call as the model made it (tools protocol), kept to replay the conversation."""

    id: str
    name: str
    args: Any
    """The arguments: a dict, or the unparsed text of arguments that were not valid JSON."""


TOOL_VERBS: dict[str, tuple[ActionName, str]] = {
    "search": ("Search", "title"),
    "lookup": ("Lookup", "keyword"),
    "finish": ("Finish", "answer"),
}
"""Tool name -> (the action's verb, the tool's one argument)."""
VALID_TOOLS_HINT = (
    "Call exactly one tool per reply: search(title), lookup(keyword) or finish(answer), "
    "each with one text argument."
)
SEARCH_DESCRIPTION = (
    "Open the Wikipedia page with exactly this title and show its first sentences; if there "
    "is none, list similar titles."
)
LOOKUP_DESCRIPTION = (
    "Show the next sentence containing the keyword on the page opened by the last search; "
    "repeating the same lookup shows the next match."
)
FINISH_DESCRIPTION = "Give the final answer (a short phrase, or yes/no) and end the task."
_DESCRIPTIONS = {
    "search": SEARCH_DESCRIPTION,
    "lookup": LOOKUP_DESCRIPTION,
    "finish": FINISH_DESCRIPTION,
}
_ARGUMENT_HELP = {
    "title": "the exact title of a Wikipedia page",
    "keyword": "a word or phrase to find on the open page",
    "answer": "the final answer: a short phrase, or yes/no",
}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": _DESCRIPTIONS[name],
            "parameters": {
                "type": "object",
                "properties": {
                    argument: {"type": "string", "description": _ARGUMENT_HELP[argument]}
                },
                "required": [argument],
                "additionalProperties": False,
            },
        },
    }
    for name, (_, argument) in TOOL_VERBS.items()
]
"""The three tools in OpenAI function format (what `bind_tools` sends)."""
FEVER_FINISH_DESCRIPTION = (
    f"Give the verdict on the claim, exactly one of {LABELS_SHOWN}, and end the task."
)
FEVER_TOOLS: list[dict[str, Any]] = [
    *TOOLS[:2],
    {
        "type": "function",
        "function": {
            "name": "finish",
            "description": FEVER_FINISH_DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {
                    "answer": {
                        "type": "string",
                        "enum": list(LABELS),
                        "description": "the label: SUPPORTS, REFUTES or NOT ENOUGH INFO",
                    }
                },
                "required": ["answer"],
                "additionalProperties": False,
            },
        },
    },
]
"""The tools under `task="fever"`: finish takes one of the three labels (an enum)."""
TASK_TOOLS: dict[str, list[dict[str, Any]]] = {"hotpotqa": TOOLS, "fever": FEVER_TOOLS}
MAX_ARGUMENT_DEPTH = 20
"""Lists and objects in a tool call's arguments nested deeper than this are cut (see `storable_args`)."""
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# Linear on long runs of spaces: one way to split them (see wikireact.protocols.text).
_THOUGHT_LABEL = re.compile(
    r"^\s*(?:[*_`>#]+\s*)?thought\s*(?:\d+\s*)?(?:[*_`]+\s*)?:[*_`\s]*", re.IGNORECASE
)


def tool_name(verb: ActionName) -> str:
    """Return the tool that performs `verb` (`Search` -> `search`)."""
    return verb.lower()


def tool_call_of(action: Action, call_id: str) -> dict[str, Any]:
    """Return `action` as a LangChain tool call (`{"name", "args", "id"}`)."""
    argument = TOOL_VERBS[tool_name(action.name)][1]
    return {"name": tool_name(action.name), "args": {argument: action.argument}, "id": call_id}


def calls_of_reply(reply: AIMessage, step: int) -> list[ToolCallRecord]:
    """Return every tool call of a reply, well-formed or not, with an id for each.

    The calls enter the state, so their arguments are first made storable (`storable_args`).
    """
    calls: list[ToolCallRecord] = []
    for call in [*reply.tool_calls, *reply.invalid_tool_calls]:
        number = len(calls) + 1
        calls.append(
            ToolCallRecord(
                id=valid_unicode(str(call.get("id") or f"call_{step}_{number}")),
                name=valid_unicode(str(call.get("name") or "")),
                args=storable_args(call.get("args")) if call.get("args") is not None else {},
            )
        )
    return calls


def storable_args(value: Any, depth: int = 0) -> Any:
    """Return a call's arguments in a form every checkpointer stores, keeping each value's kind.

    Strings get invalid Unicode replaced; integers beyond 64 bits (which the checkpoint
    serializer refuses) become the nearest float; lists and objects nested deeper than
    `MAX_ARGUMENT_DEPTH` are cut to empty ones (deep nesting overflows the stack of
    whatever walks it next); other values become null. A number, a list or an object
    stays one, so `parse` still refuses it as a non-text argument, saying which kind it is.
    """
    if isinstance(value, str):
        return valid_unicode(value)
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        return value if _INT64_MIN <= value <= _INT64_MAX else _nearest_float(value)
    if isinstance(value, Mapping):
        if depth >= MAX_ARGUMENT_DEPTH:
            return {}
        return {valid_unicode(str(k)): storable_args(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [] if depth >= MAX_ARGUMENT_DEPTH else [storable_args(v, depth + 1) for v in value]
    return None


def _nearest_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.copysign(math.inf, value)


def render_call(call: Mapping[str, Any]) -> str:
    """Return a call as readable text, e.g. `search(title="Ed Wood")` (for invalid steps)."""
    args = call.get("args")
    if isinstance(args, Mapping):
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    else:
        inner = str(args)
    return f"{call.get('name') or '?'}({inner})"[:200]


def parse_tool_calls(content: str, calls: Sequence[Mapping[str, Any]]) -> ParsedOutput:
    """Read a reply's text (the thought) and its tool calls into one action or a format error."""
    try:
        thought = _thought(content if isinstance(content, str) else str(content))
        if not calls:
            return ParsedOutput(
                thought, FormatError("no tool call in the reply. " + VALID_TOOLS_HINT)
            )
        if len(calls) > 1:
            names = ", ".join(str(c.get("name")) for c in calls)
            return ParsedOutput(
                thought,
                FormatError(
                    f"{len(calls)} tool calls in one reply ({names}); give exactly one. "
                    + VALID_TOOLS_HINT,
                    "; ".join(render_call(c) for c in calls)[:200],
                ),
            )
        return ParsedOutput(thought, action_from_call(calls[0].get("name"), calls[0].get("args")))
    except Exception as exc:  # defensive: the parser must never take an episode down
        return ParsedOutput(
            "", FormatError(f"could not read the tool call ({type(exc).__name__}).")
        )


def action_from_call(name: object, args: object) -> Action | FormatError:
    """Return the action of one tool call, or why it is not a valid call."""
    shown = render_call({"name": name, "args": args})
    tool = str(name or "").strip().lower()
    if tool not in TOOL_VERBS:
        close = difflib.get_close_matches(tool, list(TOOL_VERBS), n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]}?" if close else ""
        return FormatError(f"unknown tool `{name}`.{hint} " + VALID_TOOLS_HINT, shown)
    verb, argument = TOOL_VERBS[tool]
    if not isinstance(args, Mapping):
        return FormatError(
            f"the arguments of {tool} are not a JSON object: `{str(args)[:100]}`. "
            + VALID_TOOLS_HINT,
            shown,
        )
    extra = [str(k) for k in args if k != argument]
    if argument not in args:
        guess = f" Did you mean {argument} instead of {extra[0]}?" if len(extra) == 1 else ""
        return FormatError(
            f"{tool} needs the argument `{argument}` (text).{guess} " + VALID_TOOLS_HINT, shown
        )
    if extra:
        return FormatError(
            f"{tool} takes only `{argument}`; unexpected: {', '.join(extra)}. " + VALID_TOOLS_HINT,
            shown,
        )
    value = args[argument]
    if not isinstance(value, str):
        return FormatError(
            f"the argument `{argument}` of {tool} must be text, got {_json_type(value)}. "
            + VALID_TOOLS_HINT,
            shown,
        )
    return make_action(verb, value, shown, hint=" " + VALID_TOOLS_HINT)


def script_message(output: Mapping[str, Any], index: int) -> AIMessage:
    """Turn a scripted tool reply into an AIMessage with tool calls.

    `{"tool": "search", "args": {"title": "Ed Wood"}, "content": "thought"}` is one call;
    `{"tool_calls": [{"tool": ..., "args": ...}, ...], "content": ...}` is any number.
    """
    listed = output.get("tool_calls")
    specs = list(listed) if isinstance(listed, list) else [output] if "tool" in output else []
    calls = [
        {
            "name": str(spec.get("tool", spec.get("name", ""))),
            "args": spec.get("args", {}),
            "id": str(spec.get("id") or f"call_{index}_{number}"),
            "type": "tool_call",
        }
        for number, spec in enumerate(specs, start=1)
    ]
    valid = [c for c in calls if isinstance(c["args"], dict)]
    invalid = [
        {
            **c,
            "args": json.dumps(c["args"]),
            "error": "arguments are not an object",
            "type": "invalid_tool_call",
        }
        for c in calls
        if not isinstance(c["args"], dict)
    ]
    return AIMessage(
        content=str(output.get("content", "")), tool_calls=valid, invalid_tool_calls=invalid
    )


def is_script_output(output: object) -> bool:
    """Whether `output` is a scripted reply: text, an AIMessage, or a tool-call dict."""
    if isinstance(output, str | AIMessage):
        return True
    return isinstance(output, Mapping) and (
        "tool" in output
        or isinstance(output.get("tool_calls"), list)
        or isinstance(output.get("content"), str)
    )


def _thought(content: str) -> str:
    text = " ".join(
        line.strip() for line in cut_at_observation(content).splitlines() if line.strip()
    )
    return _THOUGHT_LABEL.sub("", text, count=1).strip()


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
