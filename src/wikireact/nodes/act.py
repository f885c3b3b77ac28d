"""`act`: the only node with side effects. Executes Search/Lookup against Wikipedia.

With approval on, it first pauses with `interrupt()` showing the proposed action; the
resume value approves it, replaces it, or rejects it with a note (see
`wikireact.episode.approval`), and the decision and reviewer are recorded for the audit trail.
The interrupt comes before any side effect, so re-running this node on resume never
repeats one. It is the only node that records times (start and end of the execution,
UTC); its writes are saved together, so a resumed step keeps the times it ran at.

An outage of the source is not a result: it raises `WikiOutageError` (nothing is
recorded, the thread can be resumed, and a retry is not a repeat).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from wikireact.context import Context
from wikireact.episode.approval import APPROVAL_HINT, read_decision
from wikireact.episode.audit import utc_now
from wikireact.episode.resources import DEFAULT_RESOURCES, Resources
from wikireact.episode.stored_context import episode_context
from wikireact.errors import WikiOutageError
from wikireact.evidence.shown import lookup_shown, search_shown
from wikireact.prompting.quoting import sanitize_observation
from wikireact.protocols.labels import as_verdict
from wikireact.protocols.text import Action, FormatError
from wikireact.state import ActionDict, CurrentStep, State
from wikireact.wiki.environment import lookup, search, truncate
from wikireact.wiki.repetition import state_key


def act(
    state: State,
    runtime: Runtime[Context],
    config: RunnableConfig,
    resources: Resources = DEFAULT_RESOURCES,
) -> dict[str, Any]:
    """Execute the parsed action and record its observation, times and the page state it leaves."""
    context, kept = episode_context(state, runtime.context)
    # Gated if approval is on now, or was when the step was proposed: a run that turns it
    # off at a pause answers the waiting step (see `wikireact.episode.admission`).
    gated = context.approve or bool((state.get("context") or {}).get("approve"))
    return {**kept, **_run(state, context, gated, config, resources)}


def _run(
    state: State, context: Context, gated: bool, config: RunnableConfig, resources: Resources
) -> dict[str, Any]:
    """Ask for approval when `gated`, then run the action (see `act`)."""
    current = state.get("current") or {}
    proposed = current.get("action")
    if proposed is None:  # unreachable through the routers; kept total for manual updates
        return {"current": CurrentStep(kind="invalid", observation="No action to execute.")}
    action = Action(proposed["name"], proposed["argument"])
    key = current.get("state_key")
    edited: CurrentStep = {}
    if gated:
        value = interrupt(approval_request(state, action, config))
        verdict = read_decision(action, value)
        edited["approval"] = verdict.approval
        if verdict.action is None:
            return {
                "current": CurrentStep(
                    **edited, kind="rejected", observation=verdict.observation, wiki_requests=0
                )
            }
        if verdict.action != action:
            action = verdict.action
            new = ActionDict(name=action.name, argument=action.argument)
            key = state_key(new, state)
            edited |= CurrentStep(
                action=new, action_text=str(action), format_error=None, state_key=key
            )
        if action.name == "Finish" and context.task == "fever":  # a reviewer's label, normalised
            checked = as_verdict(action)
            if isinstance(checked, FormatError):
                edited |= CurrentStep(action=None, format_error=checked.message, state_key=None)
                return {"current": CurrentStep(**edited, kind="invalid", wiki_requests=0)}
            action = checked
            edited["action"] = ActionDict(name="Finish", argument=action.argument)
            edited["action_text"] = str(action)
        if action.name == "Finish":
            return {
                "current": CurrentStep(**edited, kind="finish", observation="", wiki_requests=0)
            }
    source = resources.wiki_source(context)
    before = source.requests
    started_at = utc_now()
    update: dict[str, Any] = {}
    cap = context.observation_cap
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
        if found.page_title is not None and found.page_title not in state.get("pages_read", []):
            update["pages_read"] = [found.page_title]
        observation = truncate(sanitize_observation(found.observation), cap)
        shown = search_shown(found.page_title, found.sentences, observation)
    else:
        looked = lookup(
            state.get("page_sentences"), state.get("lookup_cursors") or {}, action.argument
        )
        update["lookup_cursors"] = looked.cursors
        observation = truncate(sanitize_observation(looked.observation), cap)
        shown = lookup_shown(
            state.get("page_title"), state.get("page_sentences"), looked.sentence_index, observation
        )
    return {
        **update,
        "current": CurrentStep(
            **edited,
            kind="executed",
            observation=observation,
            shown=shown,
            wiki_requests=source.requests - before,
            started_at=started_at,
            ended_at=utc_now(),
        ),
    }


def approval_request(state: State, action: Action, config: RunnableConfig) -> dict[str, Any]:
    """Return the interrupt payload: the proposed action, and which episode it belongs to.

    `question` and `thread_id` (with `checkpoint_ns`, the namespace of the asking `act`
    task, which names the parent tasks too) tell apart the pending approvals of several
    episodes, e.g. agents fanned out by a parent graph.
    """
    configurable = config.get("configurable") or {}
    return {
        "proposed_action": str(action),
        "thought": (state.get("current") or {}).get("thought", ""),
        "step": state.get("steps", 0) + 1,
        "page_title": state.get("page_title"),
        "question": state.get("question"),
        "thread_id": configurable.get("thread_id"),
        "checkpoint_ns": configurable.get("checkpoint_ns", ""),
        "hint": APPROVAL_HINT,
    }
