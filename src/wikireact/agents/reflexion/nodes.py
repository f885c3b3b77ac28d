"""Reflexion's nodes: recall, trial, evaluate, reflect, record.

- `recall` keeps the run's settings and reads the question's stored lessons (memory on).
- `trial` runs one whole ReAct episode (`wikireact.graph`) with the lessons so far, as a
  nested graph run: it inherits the checkpointer, in its own checkpoint namespace, so its
  steps are checkpointed, paused for approval and resumed like any ReAct episode's.
- `evaluate` judges the trial (`evaluator.py`; the self-check is a model call).
- `reflect` asks the model for a lesson from a failed trial (one call).

The self-check's and the reflection's prompts show the whole trial, fitted to the model's
window (`fitting`); one that cannot fit, or that the model refuses as too long, stops the
run `context_exhausted` at that node, and a run with a larger window goes on from there.
- `record` appends the trial to `trials`, keeps its lesson in the store (memory on; the
  one write of this graph, idempotent: a repeat replaces the same item), and ends the run
  when the trial passed or no trial is left, or stops it (status `recursion_limit`) when
  another trial might not fit before the recursion limit.

A trial the recursion limit cut is no outcome: `trial` stops the run there (status
`recursion_limit`), nothing is judged or remembered, and a run with a larger limit
continues inside that trial (`wikireact.episode.sub_episode`).

The budgets (`max_model_calls`, `max_input_tokens`, `max_output_tokens`) count the whole
run: a trial counts from the calls and tokens before it (its steps stop where the run
reaches one), no self-check or reflection is asked for past one, and `record` then ends
the run `budget_exhausted` with the reason.

Model calls carry their index in the run (`wikireact_call_index`), counted by
`model_calls`, so one scripted list drives a whole run and a model cache tells them apart.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime

from wikireact.agents.nested_steps import StepForwarder
from wikireact.agents.reflexion.evaluator import judge_against_gold, judge_without_gold, read_check
from wikireact.agents.reflexion.fitting import fitted_attempt_messages
from wikireact.agents.reflexion.memory import keep_lesson, read_lessons
from wikireact.agents.reflexion.prompts import (
    REFLECTION_FORM,
    check_messages,
    reflection_messages,
)
from wikireact.agents.reflexion.settings import run_settings
from wikireact.agents.reflexion.state import (
    PASSED,
    ReflexionState,
    Trial,
    TrialUsage,
)
from wikireact.context import Context, validate_question
from wikireact.episode.budgets import exceeded, tokens_used
from wikireact.episode.compiled import EpisodeGraph
from wikireact.episode.recursion import has_room
from wikireact.episode.resources import Resources
from wikireact.episode.stored_context import episode_context
from wikireact.episode.sub_episode import COMPLETED, cut_update, sub_episode_config, was_cut
from wikireact.errors import ContextExhaustedError
from wikireact.evidence import answer_evidence
from wikireact.models.call_metadata import CALL_OFFSET_KEY, TOKENS_OFFSET_KEY
from wikireact.models.reply_form import ReplyForm
from wikireact.models.variants import prompt_variant
from wikireact.nodes.model_call import call_model as model_call
from wikireact.nodes.model_call import reply_text, reply_tokens
from wikireact.nodes.window import exhausted, reopened
from wikireact.prompting.lessons import LESSON_CHARS

LESSONS_SHOWN = 3
"""The most lessons a trial's prompt shows, the latest ones (Reflexion keeps 1 to 3)."""
SUPERSTEPS_PER_TRIAL = 4
"""Supersteps of one trial in this graph: trial, evaluate, reflect, record."""


def recall(state: ReflexionState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Start the run: keep its settings, check its input, read the question's stored lessons."""
    _, kept = episode_context(state, runtime.context)
    settings = run_settings(state, runtime.store)
    question = validate_question(state.get("question"))
    store = runtime.store
    recalled = read_lessons(store, question) if settings.remembers and store is not None else []
    return {**kept, "recalled": recalled, "model_calls": 0, "steps": 0}


def lessons_for(state: ReflexionState) -> list[str]:
    """Return the lessons the next trial is shown: stored ones, then this run's, the latest few."""
    mine = [str(t["reflection"]) for t in state.get("trials") or [] if t.get("reflection")]
    lessons = list(dict.fromkeys([*(state.get("recalled") or []), *mine]))
    return lessons[-LESSONS_SHOWN:]


def trial(
    state: ReflexionState, runtime: Runtime[Context], episode: EpisodeGraph
) -> dict[str, Any]:
    """Run the next trial: a whole ReAct episode whose prompt shows the lessons so far."""
    context, kept = episode_context(state, runtime.context)
    number = len(state.get("trials") or []) + 1
    lessons = lessons_for(state)
    calls = state.get("model_calls", 0)
    forwarder = StepForwarder(runtime.stream_writer, state.get("steps", 0), trial=number)
    out = episode.invoke(
        {"question": state["question"], "lessons": lessons},
        sub_episode_config(state, _offsets(state), forwarder),
        context=context,
    )
    if was_cut(out):  # the recursion limit or the window stopped it: not an outcome to judge
        return {**kept, **cut_update(state, out)}
    trajectory, usage = out.get("trajectory") or [], out.get("usage") or []
    attempt = Trial(
        number=number,
        lessons=lessons,
        answer=out.get("answer"),
        status=out.get("status", "running"),
        steps=out.get("steps", 0),
        trajectory=trajectory,
        model_calls=len(usage),
        verdict=None,
        judged="",
        reflection=None,
    )
    return {
        **kept,
        **COMPLETED,
        "attempt": attempt,
        "trajectory": _tagged(trajectory, trial=number),
        "usage": _tagged(usage, trial=number, call="step"),
        "audit": _tagged(out.get("audit") or [], trial=number),
        "steps": state.get("steps", 0) + attempt["steps"],
        "model_calls": calls + len(usage),
    }


def evaluate(
    state: ReflexionState, runtime: Runtime[Context], resources: Resources
) -> dict[str, Any]:
    """Judge the trial: exact match with a gold answer; else Finish, and the self-check if on."""
    context, _ = episode_context(state, runtime.context)
    settings = run_settings(state, runtime.store)
    attempt = state["attempt"]
    if settings.gold_answer is not None:
        verdict, judged = judge_against_gold(attempt, settings.gold_answer)
        return {"attempt": {**attempt, "verdict": verdict, "judged": judged}}
    verdict, judged = judge_without_gold(attempt)
    if verdict != "accepted" or not settings.self_check or attempt["answer"] is None:
        return {"attempt": {**attempt, "verdict": verdict, "judged": judged}}
    if spent(state, context):  # no call past a budget: the Finish stands unchecked
        return {"attempt": {**attempt, "verdict": verdict, "judged": judged}}
    model = resources.chat_model(context)
    try:  # a prompt that cannot fit stops the run context_exhausted; a larger window checks
        messages = fitted_attempt_messages(
            check_messages,
            state["question"],
            attempt["trajectory"],
            attempt["answer"],
            context,
            model,
        )
        reply, usage = call_model(model, messages, state.get("model_calls", 0), "the self-check")
    except ContextExhaustedError as exc:
        return exhausted(exc)
    verdict, judged = read_check(reply, attempt["answer"])
    return {
        **reopened(state),
        "status": "running",
        "attempt": {
            **attempt,
            "verdict": verdict,
            "judged": judged,
            "model_calls": attempt["model_calls"] + 1,
        },
        "usage": [_call_usage(attempt, usage, "self_check")],
        "model_calls": state.get("model_calls", 0) + 1,
    }


def reflect(
    state: ReflexionState, runtime: Runtime[Context], resources: Resources
) -> dict[str, Any]:
    """Ask the model for a short lesson from the failed trial (one call)."""
    context, _ = episode_context(state, runtime.context)
    attempt = state["attempt"]
    if spent(state, context):  # no call past a budget: `record` ends the run
        return {"attempt": {**attempt, "reflection": None}}
    model = resources.chat_model(context)
    try:  # a prompt that cannot fit stops the run context_exhausted; a larger window reflects
        messages = fitted_attempt_messages(
            partial(reflection_messages, variant=prompt_variant(model)),
            state["question"],
            attempt["trajectory"],
            attempt["judged"],
            context,
            model,
        )
        reply, usage = call_model(
            model, messages, state.get("model_calls", 0), "the reflection", REFLECTION_FORM
        )
    except ContextExhaustedError as exc:
        return exhausted(exc)
    lesson = " ".join(reply.removeprefix("Lesson:").split())[:LESSON_CHARS] or None
    return {
        **reopened(state),
        "status": "running",
        "attempt": {**attempt, "reflection": lesson},
        "usage": [_call_usage(attempt, usage, "reflection")],
        "model_calls": state.get("model_calls", 0) + 1,
    }


def record(state: ReflexionState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Keep the trial (and its lesson, memory on); end the run when it passed or trials ran out."""
    settings = run_settings(state, runtime.store)
    attempt = state["attempt"]
    lesson = attempt["reflection"]
    if settings.remembers and lesson and runtime.store is not None:
        question = validate_question(state.get("question"))  # as `recall` read it
        keep_lesson(runtime.store, question, attempt, _run_key(get_config(), lesson))
    update: dict[str, Any] = {"trials": [attempt]}
    passed = attempt["verdict"] in PASSED
    reason = None if passed else spent(state, episode_context(state, runtime.context)[0])
    if passed or attempt["number"] >= settings.max_trials or reason is not None:
        update |= {"answer": attempt["answer"], "status": attempt["status"]}
        if reason is not None:  # a budget, counted over every trial and call, is reached
            update |= {"status": "budget_exhausted", "stop_reason": reason}
        trajectory = state.get("trajectory") or []  # this trial's steps are the last ones
        first = len(trajectory) - len(attempt["trajectory"])
        question = str(state.get("question") or "")
        update |= answer_evidence(trajectory, attempt["answer"], question=question, first=first)
    elif not has_room(state.get("remaining_steps", SUPERSTEPS_PER_TRIAL + 1), SUPERSTEPS_PER_TRIAL):
        update["status"] = "recursion_limit"  # the next trial might not fit: a larger limit runs it
    return update


def spent(state: ReflexionState, context: Context) -> str | None:
    """Return which budget the run has reached, counting every trial and call so far, or None."""
    return exceeded(state.get("usage") or [], context, state.get("model_calls", 0))


def _offsets(state: ReflexionState) -> dict[str, Any]:
    """Return the run metadata a trial counts its budgets from: the calls and tokens so far."""
    tokens = tokens_used(state.get("usage") or [])
    return {CALL_OFFSET_KEY: state.get("model_calls", 0), TOKENS_OFFSET_KEY: tokens}


def call_model(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    index: int,
    what: str,
    form: ReplyForm | None = None,
) -> tuple[str, dict[str, int]]:
    """Call `model` as call `index` of the run; return its text (thinking dropped) and tokens.

    An outage is a `ModelCallError` (the run stops resumable at this node); see
    `wikireact.nodes.model_call`.
    """
    failure = f"the model did not answer {what}"
    reply = model_call(model, messages, index=index, failure=failure, reply_form=form)
    input_tokens, output_tokens = reply_tokens(reply)
    return reply_text(reply), {"input_tokens": input_tokens, "output_tokens": output_tokens}


def _tagged(items: Sequence[Mapping[str, Any]], **tags: Any) -> list[dict[str, Any]]:
    """Return copies of a trial's steps, usage entries or audit records with `tags` added."""
    return [{**item, **tags} for item in items]


def _call_usage(attempt: Trial, tokens: dict[str, int], call: str) -> TrialUsage:
    return TrialUsage(
        step=attempt["steps"],
        input_tokens=tokens["input_tokens"],
        output_tokens=tokens["output_tokens"],
        wiki_requests=0,
        trial=attempt["number"],
        call=call,  # type: ignore[typeddict-item]
    )


def _run_key(config: RunnableConfig, lesson: str) -> str:
    """Return the run's part of a lesson's store key: its thread, else the lesson's digest."""
    thread = (config.get("configurable") or {}).get("thread_id")
    return str(thread) if thread is not None else hashlib.sha256(lesson.encode()).hexdigest()[:16]
