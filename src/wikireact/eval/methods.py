"""Run one method on one question and return its record (one line of trajectories.jsonl)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from wikireact.context import Context
from wikireact.eval.baselines import (
    CallStats,
    ChatModel,
    Vote,
    majority_is_weak,
    react_needs_fallback,
    run_cot,
    run_cot_sc,
    run_standard,
)
from wikireact.eval.categories import categorize
from wikireact.eval.dataset import Item
from wikireact.eval.fever_metrics import fever_record
from wikireact.eval.method_names import AGENT_METHODS, Method, agent_of
from wikireact.eval.method_names import EPISODE_METHODS as EPISODE_METHODS  # re-exported
from wikireact.eval.method_names import METHODS as METHODS  # re-exported
from wikireact.eval.scoring import exact_match, f1_score, is_supported, is_yes_no
from wikireact.eval.supporting_facts import record_scores
from wikireact.eval.turns import Turns
from wikireact.graph import run_to_end
from wikireact.models.call_metadata import QUESTION_ID_KEY
from wikireact.prompting.exemplars import QaExemplar
from wikireact.storage.threads import Threads, ensure_registered


@dataclass(frozen=True)
class MethodSettings:
    """What every method shares in one evaluation (the fairness contract)."""

    model: BaseChatModel
    graph: CompiledStateGraph[Any, Any, Any, Any]
    """The graph of the method's agent (`wikireact.eval.method_names.agent_of`)."""
    context: Context
    """The episodes' complete settings (budget, repetition limit, observation cap, no approval)."""
    sc_samples: int
    sc_temperature: float
    sampling: dict[str, Any]
    qa_exemplars: Sequence[QaExemplar] | None = None
    """Few-shot examples of Standard/CoT; None: wikireact's own."""
    thread_prefix: str = ""
    """Prepended to every thread id (a shared run's name: runs share one database)."""
    turns: Turns | None = None
    """The run's compute turn (`wikireact.eval.turns`), given up during every model call."""
    snapshot_id: str | None = None
    """The id of the snapshot the episodes run on (registered with their threads)."""

    def with_turn(self, config: RunnableConfig) -> RunnableConfig:
        """Return `config` (which has no callbacks) with the run's turn as its callback, if any."""
        return config if self.turns is None else {**config, "callbacks": [self.turns]}

    def computing(self) -> AbstractContextManager[None]:
        """Return a context that holds the run's turn (if any) while a question is worked on."""
        return nullcontext() if self.turns is None else self.turns.hold()


NOT_RECORDED = frozenset({"usage", "audit", "model_calls"})
"""Episode outputs a record summarises (tokens, requests, calls) instead of copying."""


def thread_id(method: str, seed: int, item: Item) -> str:
    """Return the checkpoint thread of one episode (within its run: see `episode_thread`)."""
    return f"{method}/{seed}/{item.id}"


def episode_thread(settings: MethodSettings, method: str, seed: int, item: Item) -> str:
    """Return the full id of the thread `item`'s episode runs in (its run lock's key too)."""
    return settings.thread_prefix + thread_id(method, seed, item)


def _episode_context(settings: MethodSettings, method: str) -> Context:
    return dataclasses.replace(settings.context, method="act" if method == "act" else "react")


def register_episode(
    store: Threads, method: Method, item: Item, seed: int, settings: MethodSettings
) -> None:
    """Register the thread of `item`'s episode (question, settings, snapshot), if it has one.

    Then `ask` refuses another question on it and `resume` continues it with the run's
    settings. Call it holding the thread's run lock, as `ask` and `resume` do.
    """
    if method in EPISODE_METHODS or method in AGENT_METHODS:
        ensure_registered(
            store,
            episode_thread(settings, method, seed, item),
            item.question,
            _episode_context(settings, method),
            settings.snapshot_id,
            agent=agent_of(method),
        )


def _episode(settings: MethodSettings, item: Item, seed: int, method: str) -> dict[str, Any]:
    """Run (or resume) a ReAct/Act episode in its checkpointed thread."""
    config: RunnableConfig = {
        "configurable": {"thread_id": episode_thread(settings, method, seed, item)},
        "metadata": {QUESTION_ID_KEY: item.id},
    }
    context = _episode_context(settings, method)
    # Reflexion's evaluator: exact match against the gold answer, as in the Reflexion paper's
    # HotpotQA runs (only the verdict reaches the model's reflection, never the answer); LATS's too.
    inputs = {"gold_answer": item.answer} if method in ("reflexion", "lats") else None
    return run_to_end(settings.graph, item.question, settings.with_turn(config), context, inputs)


def run_method(method: Method, item: Item, seed: int, settings: MethodSettings) -> dict[str, Any]:
    """Answer `item` with `method`, score it and give it its error category (`categorize`).

    The gold answer never reaches the model. Single-process and shared runs both record
    what this returns, so their records are the same. The worker holds the run's turn
    (`MethodSettings.turns`) while it computes; the record's `latency_s` counts from
    before the turn is taken, so it includes waits for it.
    """
    start = time.perf_counter()
    with settings.computing():
        record = _run_method(method, item, seed, settings, start)
    record["category"] = categorize(record, item.pages)
    record.update(item.groups)  # HotpotQA's type and level, for the report's breakdowns
    return record


def _run_method(
    method: Method, item: Item, seed: int, settings: MethodSettings, start: float
) -> dict[str, Any]:
    stats = CallStats()
    episode: dict[str, Any] = {}
    vote: Vote | None = None
    switched = False
    task = settings.context.task
    # The question's id goes with every model call (run metadata), for per-question scripts.
    model = settings.model.with_config(settings.with_turn({"metadata": {QUESTION_ID_KEY: item.id}}))
    if method in ("react", "act", "react-cot-sc") or method in AGENT_METHODS:
        episode = _episode(settings, item, seed, method)
        answer = episode.get("answer")
        if method == "react-cot-sc" and react_needs_fallback(answer):
            vote = _vote(settings, model, item, stats, seed)
            answer, switched = vote.answer, True
    elif method == "standard":
        answer = run_standard(model, item.question, stats, settings.qa_exemplars, task)
    elif method == "cot":
        answer = run_cot(model, item.question, stats, settings.qa_exemplars, task)
    else:  # cot-sc, cot-sc-react
        vote = _vote(settings, model, item, stats, seed)
        answer = vote.answer
        if method == "cot-sc-react" and majority_is_weak(vote):
            episode = _episode(settings, item, seed, method)
            answer, switched = episode.get("answer"), True
    record = _record(
        method, item, seed, answer, episode, stats, vote, switched, time.perf_counter() - start
    )
    record |= record_scores(answer, item.answer, episode, item.facts, task)  # with gold facts
    return fever_record(record) if task == "fever" else record


def _vote(
    settings: MethodSettings, model: ChatModel, item: Item, stats: CallStats, seed: int
) -> Vote:
    sampling = (
        {**settings.sampling, "seed": settings.sampling["seed"] + 1000 * seed}
        if "seed" in settings.sampling
        else settings.sampling
    )
    return run_cot_sc(
        model,
        item.question,
        stats,
        samples=settings.sc_samples,
        temperature=settings.sc_temperature,
        sampling=sampling,
        exemplars=settings.qa_exemplars,
        task=settings.context.task,
    )


def _record(
    method: str,
    item: Item,
    seed: int,
    answer: str | None,
    episode: dict[str, Any],
    stats: CallStats,
    vote: Vote | None,
    switched: bool,
    latency: float,
) -> dict[str, Any]:
    trajectory = episode.get("trajectory", [])
    usage = episode.get("usage", [])
    observations = [s["observation"] for s in trajectory]
    finished_by_agent = episode.get("status") == "finished"
    episode_calls = episode.get("model_calls")  # an agent's own count; ReAct: one per step
    record = {
        "id": item.id,
        "seed": seed,
        "method": method,
        "question": item.question,
        "gold": item.answer,
        "answer": answer,
        "em": exact_match(answer, item.answer),
        "f1": f1_score(answer, item.answer),
        "status": episode.get("status") or ("finished" if answer is not None else "no_answer"),
        "steps": episode.get("steps", 0),
        "invalid_steps": sum(1 for s in trajectory if s["kind"] == "invalid"),
        "model_calls": stats.model_calls
        + (len(usage) if episode_calls is None else int(episode_calls)),
        "input_tokens": stats.input_tokens + sum(u["input_tokens"] for u in usage),
        "output_tokens": stats.output_tokens + sum(u["output_tokens"] for u in usage),
        "wiki_requests": sum(u["wiki_requests"] for u in usage),
        "latency_s": latency,
        "cleared_per_step": [u.get("cleared", 0) for u in usage],
        "model_seconds_per_step": [a.get("model_seconds", 0.0) for a in episode.get("audit", [])],
        "wiki_seconds_per_step": [a.get("wiki_seconds", 0.0) for a in episode.get("audit", [])],
        "supported": (
            is_supported(answer, observations)
            if finished_by_agent and not switched and not is_yes_no(answer)
            else None
        ),
        "switched": switched,
        "votes": None
        if vote is None
        else {"votes": vote.votes, "samples": vote.samples, "answers": vote.answers},
        "trajectory": trajectory,
    }
    # An agent's own outputs (e.g. ReWOO's plan and evidence) go into its record as they are.
    extra = {k: v for k, v in episode.items() if k not in record and k not in NOT_RECORDED}
    return {**record, **extra}
