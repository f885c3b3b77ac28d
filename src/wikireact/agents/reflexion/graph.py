"""Reflexion as a LangGraph state machine: recall -> trial -> evaluate -> [reflect] -> record -> trial ...

Routers:
- `route_start`: a new run goes to `recall`; one stopped before the recursion limit to
  `trial` (the next trial, or the one the limit cut, continued); one out of context to where
  it stopped (inside its trial, `evaluate` or `reflect`); an ended one stays ended (END).
- `route_after_trial`: a trial that ended by itself goes to `evaluate`; one the recursion
  limit cut stops the run (END), unjudged.
- `route_after_evaluate`: a failed trial goes to `reflect` when a lesson has a use (a trial
  is left, or memory keeps it for later runs); anything else to `record`.
- `route_after_reflect`: `record`; END when the reflection's prompt did not fit.
- `route_after_record`: the next `trial` while the run goes on; END once it ended.

Each trial is the ReAct graph (`wikireact.graph.make_builder`) run by the `trial` node, not
added as a node itself: the node maps the run's state to the episode's input (question,
lessons, calls so far) and its output to one trial record, while the run's own
`trajectory`/`usage`/`audit` grow by each trial's steps tagged with its number (a subgraph
node would write its output keys into the parent's same-named channels, where append
reducers merge every trial's lists). The episode runs nested: it inherits the
checkpointer in its own namespace, so its steps are checkpointed, paused for approval and
resumed; `stream(..., subgraphs=True)` shows them, and the node's closure names the
compiled episode, so `get_graph(xray=True)` and `get_state(..., subgraphs=True)` find it.

`graph` (module level, no checkpointer, no store) is what `langgraph.json` serves (the
server gives it its store); `build_graph(checkpointer=..., store=...)` for standalone runs.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from wikireact.agents.reflexion.nodes import (
    SUPERSTEPS_PER_TRIAL,
    evaluate,
    recall,
    record,
    reflect,
    trial,
)
from wikireact.agents.reflexion.settings import run_settings
from wikireact.agents.reflexion.state import (
    PASSED,
    ReflexionInput,
    ReflexionOutput,
    ReflexionState,
)
from wikireact.context import Context
from wikireact.episode.compiled import EpisodeGraph, as_episode_graph
from wikireact.episode.recursion import declare_least_limit
from wikireact.episode.resources import Resources
from wikireact.graph import MIN_RECURSION_LIMIT as REACT_MIN_RECURSION_LIMIT
from wikireact.graph import make_builder as react_builder
from wikireact.prompting.exemplars import EpisodeExemplar
from wikireact.state import EpisodeInput
from wikireact.wiki.base import WikiSource

NAME = "wikireact-reflexion"
MIN_RECURSION_LIMIT = max(2 + SUPERSTEPS_PER_TRIAL, REACT_MIN_RECURSION_LIMIT)
"""The least `recursion_limit` (the door's): START and recall, then one whole trial whose
`record` still has a superstep left to end the run in (`wikireact.episode.recursion`)."""
declare_least_limit(ReflexionState, "Reflexion", MIN_RECURSION_LIMIT)


def route_start(
    state: ReflexionState,
) -> Literal["recall", "trial", "evaluate", "reflect", "__end__"]:
    """Start a new run; continue one stopped before the recursion limit or out of context.

    A run out of context (`context_exhausted`) goes on inside the trial that ran out, or at
    the node whose prompt did not fit: `evaluate` while its trial is unjudged, else
    `reflect`. An ended run stays ended.
    """
    status = state.get("status")
    if status == "recursion_limit" or (status == "context_exhausted" and state.get("cut_episode")):
        return "trial"
    if status == "context_exhausted":
        return "evaluate" if state["attempt"]["verdict"] is None else "reflect"
    return "recall" if status in (None, "running") else "__end__"


def route_after_trial(state: ReflexionState) -> Literal["evaluate", "__end__"]:
    """Judge a trial that ended by itself; stop when the recursion limit cut it."""
    return "evaluate" if state.get("status") == "running" else "__end__"


def route_after_evaluate(
    state: ReflexionState, runtime: Runtime[Context]
) -> Literal["reflect", "record", "__end__"]:
    """Reflect on a failed trial when its lesson has a use: a next trial, or later runs.

    A self-check whose prompt did not fit stops the run (END).
    """
    if state.get("status") == "context_exhausted":
        return "__end__"
    settings = run_settings(state, runtime.store)
    attempt = state["attempt"]
    if attempt["verdict"] in PASSED:
        return "record"
    has_next = attempt["number"] < settings.max_trials
    return "reflect" if has_next or settings.remembers else "record"


def route_after_reflect(state: ReflexionState) -> Literal["record", "__end__"]:
    """Record the trial and its lesson; stop when the reflection's prompt did not fit."""
    return "__end__" if state.get("status") == "context_exhausted" else "record"


def route_after_record(state: ReflexionState) -> Literal["trial", "__end__"]:
    """Run the next trial while the run goes on."""
    return "trial" if state.get("status") == "running" else "__end__"


def make_builder(resources: Resources | None = None) -> StateGraph[Any, Any, Any, Any]:
    """Return the uncompiled graph; `resources` fixes the model, source and exemplars."""
    resources = resources or Resources()
    episode = react_builder(resources, input_schema=EpisodeInput).compile(name="wikireact")

    def run_trial(state: ReflexionState, runtime: Runtime[Context]) -> dict[str, Any]:
        return trial(state, runtime, episode)

    builder = StateGraph(
        ReflexionState,
        context_schema=Context,
        input_schema=ReflexionInput,
        output_schema=ReflexionOutput,
    )
    builder.add_node("recall", recall)
    builder.add_node("trial", run_trial)
    builder.add_node("evaluate", partial(evaluate, resources=resources))
    builder.add_node("reflect", partial(reflect, resources=resources))
    builder.add_node("record", record)
    builder.add_conditional_edges(START, route_start)
    builder.add_edge("recall", "trial")
    builder.add_conditional_edges("trial", route_after_trial)
    builder.add_conditional_edges("evaluate", route_after_evaluate)
    builder.add_conditional_edges("reflect", route_after_reflect)
    builder.add_conditional_edges("record", route_after_record)
    return builder


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    model: BaseChatModel | str | None = None,
    wiki: WikiSource | str | None = None,
    store: BaseStore | None = None,
    interrupt_before: list[str] | None = None,
    exemplars: tuple[EpisodeExemplar, ...] | None = None,
) -> EpisodeGraph:
    """Compile the Reflexion graph (an `EpisodeGraph`: checked at the door, resumable threads).

    Args:
        checkpointer: e.g. `SqliteSaver(conn)`; makes every run (and each trial's steps) resumable.
        model: a LangChain chat model or a `provider:model` string; default: `Context.model`.
        wiki: a `WikiSource` or a source string; default: `Context.wiki`.
        store: LangGraph's long-term store for the lessons (`memory="question"`, the default
            with a store): `InMemoryStore()`, or `wikireact.storage.long_term.open_store(db)`.
        interrupt_before: Reflexion nodes to pause before (e.g. `["reflect"]`); to pause
            before each Search/Lookup inside the trials, run with `Context(approve=True)`.
        exemplars: the trials' few-shot episodes; default: wikireact's own.
    """
    resources = Resources.given(model, wiki, exemplars)
    compiled = make_builder(resources).compile(
        checkpointer=checkpointer, store=store, interrupt_before=interrupt_before, name=NAME
    )
    return as_episode_graph(cast(Any, compiled))


builder = make_builder()
graph = as_episode_graph(cast(Any, builder.compile(name=NAME)))
