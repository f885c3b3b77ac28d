"""`work`: run one plan step (a `Send` from the scheduler); the only node with side effects.

Search and Lookup run without the model, through ReAct's environment
(`wikireact.wiki.environment`) and observation cap; with approval on, the step first
pauses with `interrupt()` (before any side effect, so re-running this node on resume
repeats nothing), and the reviewer may approve it, reject it, or replace it with another
action of the same tool. An LLM step is one model call on its input (the evidence it cites
fenced, `prompts.fenced`, fitted to the model's window: `fitting`); its answer is evidence
too; one whose prompt cannot fit returns a result with a `stop_reason` instead, which the
scheduler does not record (the episode stops `context_exhausted`). The worker returns
the step's result; the scheduler records it. An outage of the source raises
`WikiOutageError`, as in ReAct (nothing is recorded, the thread can be resumed).
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from typing_extensions import TypedDict

from wikireact.agents.rewoo.fitting import fitted_llm_messages
from wikireact.agents.rewoo.prompts import LLM_FORM
from wikireact.agents.rewoo.state import StepResult, Task
from wikireact.context import Context
from wikireact.episode.approval import APPROVAL_HINT, read_decision
from wikireact.episode.audit import utc_now
from wikireact.episode.resources import DEFAULT_RESOURCES, Resources
from wikireact.episode.stored_context import settle
from wikireact.errors import ContextExhaustedError, WikiOutageError
from wikireact.evidence.shown import lookup_shown, search_shown
from wikireact.nodes.model_call import call_model, reply_text, reply_tokens
from wikireact.prompting.quoting import sanitize_observation
from wikireact.protocols.text import Action
from wikireact.state import ActionDict, State
from wikireact.wiki.environment import lookup, search, truncate
from wikireact.wiki.repetition import state_key


class WorkerInput(TypedDict):
    """A worker's input: the one step it runs (sent by the scheduler)."""

    task: Task


def work(
    sent: WorkerInput,
    runtime: Runtime[Context],
    config: RunnableConfig,
    resources: Resources = DEFAULT_RESOURCES,
) -> dict[str, Any]:
    """Run the sent step and return its result (keyed by its evidence name)."""
    task = sent["task"]
    context = settle(task["context"], runtime.context)
    name = f"#E{task['number']}"
    if task["tool"] == "LLM":
        try:
            return {"results": {name: _llm(task, context, resources)}, "model_calls": 1}
        except ContextExhaustedError as exc:  # not recorded: the scheduler stops the episode
            blank = _blank(f"LLM[{task['argument']}]", None, {})
            return {"results": {name: {**blank, "stop_reason": str(exc)}}}
    action = Action(task["tool"], task["argument"])  # type: ignore[arg-type]
    gated = context.approve or bool(task["context"].get("approve"))
    result = _blank(str(action), task["state_key"], task.get("cursors") or {})
    if gated:
        verdict = read_decision(action, interrupt(approval_request(task, action, config)))
        result["approval"] = verdict.approval
        if verdict.action is None or verdict.action.name != action.name:
            observation = verdict.observation or (
                f"The reviewer replaced {action} with {verdict.action}; a plan step keeps its "
                f"tool ({action.name}), so it was not run."
            )
            return {"results": {name: {**result, "kind": "rejected", "evidence": observation}}}
        if verdict.action != action:  # the reviewer's action is the one the rule counts
            action = verdict.action
            result |= {"action": str(action), "state_key": edited_key(task, action)}
    return {"results": {name: _execute(task, action, context, resources, result)}}


def _execute(
    task: Task, action: Action, context: Context, resources: Resources, result: StepResult
) -> StepResult:
    """Run a Search or Lookup against the episode's source; return its capped evidence."""
    source = resources.wiki_source(context)
    before = source.requests
    started_at = utc_now()
    cap = context.observation_cap
    if action.name == "Search":
        found = search(source, action.argument)
        if found.unavailable:
            raise WikiOutageError(f"{found.observation.rstrip('.')}; {action} was not run")
        observation = truncate(sanitize_observation(found.observation), cap)
        result |= {"page_title": found.page_title, "sentences": found.sentences}
        result["shown"] = search_shown(found.page_title, found.sentences, observation)
    else:
        looked = lookup(task.get("sentences"), task.get("cursors") or {}, action.argument)
        observation = truncate(sanitize_observation(looked.observation), cap)
        result["cursors"] = looked.cursors
        result["shown"] = lookup_shown(
            task.get("page_title"), task.get("sentences"), looked.sentence_index, observation
        )
    return StepResult(
        **{
            **result,
            "kind": "executed",
            "evidence": observation,
            "wiki_requests": source.requests - before,
            "started_at": started_at,
            "ended_at": utc_now(),
        }
    )


def _llm(task: Task, context: Context, resources: Resources) -> StepResult:
    """Run an LLM step: one model call on its input (evidence substituted), timed."""
    model = resources.chat_model(context)
    messages = fitted_llm_messages(task["question"], task["argument"], context, model)
    started = time.monotonic()
    reply = call_model(
        model,
        messages,
        index=task["call_index"],
        failure=f"the model did not answer the LLM step #E{task['number']}",
        reply_form=LLM_FORM,
    )
    input_tokens, output_tokens = reply_tokens(reply)
    text = sanitize_observation(reply_text(reply))
    return StepResult(
        **{
            **_blank(f"LLM[{task['argument']}]", None, {}),
            "kind": "executed",
            "evidence": truncate(text or "(no answer)", context.observation_cap),
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "model_seconds": round(time.monotonic() - started, 3),
        }
    )


def _blank(action: str, key: str | None, cursors: dict[str, int]) -> StepResult:
    return StepResult(
        kind="executed",
        action=action,
        evidence="",
        page_title=None,
        sentences=[],
        cursors=dict(cursors),
        state_key=key,
        input_tokens=0,
        output_tokens=0,
        wiki_requests=0,
        started_at=None,
        ended_at=None,
        approval=None,
    )


def edited_key(task: Task, action: Action) -> str | None:
    """Return the state key of the reviewer's replacement, in the step's environment state."""
    page = {"page_title": task.get("page_title"), "lookup_cursors": task.get("cursors") or {}}
    return state_key(
        ActionDict(name=action.name, argument=action.argument),
        State(**page, page_key=None),  # type: ignore[typeddict-item]
    )


def approval_request(task: Task, action: Action, config: RunnableConfig) -> dict[str, Any]:
    """Return the interrupt payload: the proposed action, its plan step, and its episode.

    The keys of ReAct's (`wikireact.nodes.act.approval_request`), plus `evidence` (the
    step's name, e.g. `#E2`), so the same reviewers and prompts serve both.
    """
    configurable = config.get("configurable") or {}
    return {
        "proposed_action": str(action),
        "thought": task["thought"],
        "step": task["step"],
        "evidence": f"#E{task['number']}",
        "page_title": task.get("page_title"),
        "question": task["question"],
        "thread_id": configurable.get("thread_id"),
        "checkpoint_ns": configurable.get("checkpoint_ns", ""),
        "hint": APPROVAL_HINT,
    }
