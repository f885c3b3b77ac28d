"""`parse`: turn the model's reply into an action, and decide what kind of step it is.

In the text protocol it parses `Thought N: ...` / `Action N: Verb[argument]`; in the tools
protocol it reads the reply's tool calls (`wikireact.protocols.tools`), the text beside
the call being the thought. Classification is the same for both.

The step is `invalid` (format error), `finish`, `repeat` (the same action in the same
environment state as an earlier step, see `wikireact.wiki.repetition`), or left for `act`
to execute (kind None). Under `task="fever"` a Finish must name one of the three labels:
its argument is normalised (`supported` -> `SUPPORTS`), and anything else is an `invalid`
step saying what the labels are (the episode goes on). Never raises.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from wikireact.context import Context
from wikireact.episode.stored_context import episode_context
from wikireact.evidence.verify import finish_check
from wikireact.protocols.labels import as_verdict
from wikireact.protocols.text import Action, ParsedOutput, parse_output
from wikireact.protocols.tools import parse_tool_calls
from wikireact.state import ActionDict, CurrentStep, State, StepKind
from wikireact.wiki.repetition import earlier_step, state_key


def parse(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Parse the model's reply into the current step's thought and action, and classify it."""
    context, kept = episode_context(state, runtime.context)
    current = state.get("current") or {}
    if context.protocol == "tools":
        parsed = parse_tool_calls(current.get("raw", ""), current.get("calls") or [])
    else:
        parsed = parse_output(current.get("raw", ""), require_thought=False)
    if context.task == "fever":
        parsed = ParsedOutput(parsed.thought, as_verdict(parsed.result))
    thought = parsed.thought if context.method == "react" else ""
    if not isinstance(parsed.result, Action):
        return {
            **kept,
            "current": CurrentStep(
                thought=thought,
                action=None,
                action_text=parsed.result.action_text,
                format_error=parsed.result.message,
                kind="invalid",
                state_key=None,
                repeat_of=None,
            ),
        }
    action = ActionDict(name=parsed.result.name, argument=parsed.result.argument)
    key = state_key(action, state)
    repeat_of = earlier_step(key, state.get("proposals") or {})
    kind: StepKind | None = (
        "finish" if action["name"] == "Finish" else ("repeat" if repeat_of is not None else None)
    )
    checked = None
    if kind == "finish" and context.verify_finish:
        checked = finish_check(state.get("trajectory") or [], action["argument"])
    step = CurrentStep(
        thought=thought,
        action=action,
        action_text=str(parsed.result),
        format_error=None,
        kind=kind,
        state_key=key,
        repeat_of=repeat_of,
    )
    if checked is not None:  # sent back once: the message is the step's observation
        step.update({"kind": "unverified", "state_key": None, "repeat_of": None})
        step["observation"] = checked
    return {**kept, "current": step}
