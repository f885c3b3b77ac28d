"""`act`: the only node with side effects. Executes Search/Lookup against Wikipedia.

With approval on, it first pauses with `interrupt()` showing the proposed action; the
resume value approves it, replaces it, or rejects it with a note. The interrupt comes
before any side effect, so re-running this node on resume never repeats one.

An outage of the source is not a result: it raises `WikiOutageError` (nothing is
recorded, the thread can be resumed, and a retry is not a repeat).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from wikireact.context import Context
from wikireact.errors import WikiOutageError
from wikireact.progress import state_key
from wikireact.prompts import sanitize_observation
from wikireact.protocol import Action, FormatError, parse_action
from wikireact.resources import DEFAULT_RESOURCES, Resources, settings
from wikireact.state import ActionDict, CurrentStep, State
from wikireact.wiki.environment import lookup, search, truncate


def act(
    state: State, runtime: Runtime[Context], resources: Resources = DEFAULT_RESOURCES
) -> dict[str, Any]:
    """Execute the parsed action and record its observation and the page state it leaves."""
    context = settings(runtime)
    current = state.get("current") or {}
    proposed = current.get("action")
    if proposed is None:  # unreachable through the routers; kept total for manual updates
        return {"current": CurrentStep(kind="invalid", observation="No action to execute.")}
    action = Action(proposed["name"], proposed["argument"])
    key = current.get("state_key")
    edited: CurrentStep = {}
    if context.approve:
        decision = interrupt(
            {
                "proposed_action": str(action),
                "thought": current.get("thought", ""),
                "step": state.get("steps", 0) + 1,
                "page_title": state.get("page_title"),
                "hint": "Resume with true (approve), {'action': 'Search[...]'} (replace) "
                "or {'reject': 'why'} (reject).",
            }
        )
        approved = _apply_decision(action, decision)
        if isinstance(approved, str):
            return {"current": CurrentStep(kind="rejected", observation=approved, wiki_requests=0)}
        if approved != action:
            action = approved
            new = ActionDict(name=action.name, argument=action.argument)
            key = state_key(new, state)
            edited = CurrentStep(action=new, action_text=str(action), format_error=None, state_key=key)
        if action.name == "Finish":
            return {"current": CurrentStep(**edited, kind="finish", observation="", wiki_requests=0)}
    source = resources.wiki_source(context)
    before = source.requests
    update: dict[str, Any] = {}
    if action.name == "Search":
        found = search(source, action.argument)
        if found.unavailable:
            raise WikiOutageError(f"{found.observation.rstrip('.')}; {action} was not run")
        update |= {
            "page_title": found.page_title,
            "page_sentences": found.sentences,
            "lookup_cursors": {},
            "page_key": key if found.page_title is not None else None,
        }
        observation = found.observation
    else:
        looked = lookup(state.get("page_sentences"), state.get("lookup_cursors") or {}, action.argument)
        update["lookup_cursors"] = looked.cursors
        observation = looked.observation
    return {
        **update,
        "current": CurrentStep(
            **edited,
            kind="executed",
            observation=truncate(sanitize_observation(observation), context.observation_cap),
            wiki_requests=source.requests - before,
        ),
    }


def _apply_decision(action: Action, decision: Any) -> Action | str:
    """Return the action to run after a human's decision, or the observation of a rejection."""
    if decision is True or decision is None or decision in ("y", "yes", "approve"):
        return action
    if isinstance(decision, dict):
        if decision.get("reject") is not None or decision.get("approve") is False:
            note = str(decision.get("reject") or "no reason given").strip()
            return f"A human reviewer rejected {action}: {note}"
        if isinstance(decision.get("action"), str):
            edited = parse_action(decision["action"])
            if isinstance(edited, FormatError):
                return f"The reviewer's replacement action was invalid: {edited.message}"
            return edited
        if decision.get("approve") is True:
            return action
    if decision is False or decision in ("n", "no", "reject"):
        return f"A human reviewer rejected {action}: no reason given"
    return f"The reviewer's answer {decision!r} was not understood; {action} was not executed."
