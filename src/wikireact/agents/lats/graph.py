"""LATS as a LangGraph state machine: select -> expand -> (act -> evaluate -> [reflect])* -> backprop -> select.

Routers:
- `route_start`: a new search (or one stopped before the recursion limit) goes to
  `select`; one out of context goes on at the node whose prompt did not fit (`expand`,
  `evaluate` or `reflect`); an ended one stays ended (END).
- `route_after_select`: `expand` the selected leaf, or `finish` when a budget stopped the search.
- `route_after_evaluate`: `finish` on a terminal with reward 1; `reflect` on a failed
  terminal; else the next candidate (`act`) or, when all are children, `backprop`.
- `route_after_expand`: `act` on the candidates, or END when the prompt did not fit.
- `route_after_reflect`: the next candidate, or `backprop` (`route_next_child`); END when
  the prompt did not fit (as after `evaluate`).

`MIN_RECURSION_LIMIT` is the least `recursion_limit` that runs one iteration, declared to
the door for `LatsState` (`wikireact.episode.recursion`). `graph` (module level, no checkpointer) is what
`langgraph.json` serves; `build_graph(checkpointer=...)` for standalone runs. Both are
`EpisodeGraph`s: runs are checked at the door (`wikireact.episode.admission`), like every
agent's.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

from wikireact.agents.lats.nodes import act, backprop, evaluate, expand, finish, reflect, select
from wikireact.agents.lats.settings import MIN_RECURSION_LIMIT as MIN_RECURSION_LIMIT
from wikireact.agents.lats.state import LatsInput, LatsOutput, LatsState
from wikireact.agents.lats.tree import is_terminal
from wikireact.context import Context
from wikireact.episode.compiled import EpisodeGraph, as_episode_graph
from wikireact.episode.recursion import declare_least_limit
from wikireact.episode.resources import Resources
from wikireact.prompting.exemplars import EpisodeExemplar
from wikireact.wiki.base import WikiSource

NAME = "wikireact-lats"
declare_least_limit(LatsState, "LATS", MIN_RECURSION_LIMIT)


def route_start(
    state: LatsState,
) -> Literal["select", "expand", "evaluate", "reflect", "__end__"]:
    """Start or continue the search; one that has ended stays ended (its output is returned).

    A search out of context (`context_exhausted`) goes on at the node whose prompt did not
    fit: `evaluate` while the newest child has no value, else `expand` while the selected
    leaf has no candidates, else `reflect`.
    """
    status = state.get("status")
    if status == "context_exhausted":
        if str(state["tree"][-1]["id"]) not in (state.get("stats") or {}):
            return "evaluate"
        return "reflect" if state.get("candidates_found") else "expand"
    return "select" if status in (None, "running", "recursion_limit") else "__end__"


def route_after_select(state: LatsState) -> Literal["expand", "finish"]:
    """Expand the selected leaf, unless a budget stopped the search."""
    return "finish" if state.get("stopped_by") else "expand"


def route_after_expand(state: LatsState) -> Literal["act", "__end__"]:
    """Act on the candidates; stop when the expansion's prompt did not fit the window."""
    return "__end__" if state.get("status") == "context_exhausted" else "act"


def route_after_reflect(state: LatsState) -> Literal["act", "backprop", "__end__"]:
    """Go on with the children; stop when the reflection's prompt did not fit the window."""
    return "__end__" if state.get("status") == "context_exhausted" else route_next_child(state)


def route_next_child(state: LatsState) -> Literal["act", "backprop"]:
    """Act on the next candidate; once every candidate is a child, backpropagate."""
    return "act" if state.get("acted", 0) < len(state.get("candidates_found") or []) else "backprop"


def route_after_evaluate(
    state: LatsState,
) -> Literal["finish", "reflect", "act", "backprop", "__end__"]:
    """Finish on success; reflect on a failed terminal; else go on with the children.

    Stop when the value or self-check prompt did not fit the window.
    """
    if state.get("status") == "context_exhausted":
        return "__end__"
    if state.get("stopped_by") == "solved":
        return "finish"
    if is_terminal(state["tree"][-1]):
        return "reflect"
    return route_next_child(state)


def make_builder(resources: Resources | None = None) -> StateGraph[Any, Any, Any, Any]:
    """Return the uncompiled graph; `resources` fixes the model, source and exemplars."""
    resources = resources or Resources()
    builder = StateGraph(
        LatsState, context_schema=Context, input_schema=LatsInput, output_schema=LatsOutput
    )
    builder.add_node("select", select)
    builder.add_node("expand", partial(expand, resources=resources))
    builder.add_node("act", partial(act, resources=resources))
    builder.add_node("evaluate", partial(evaluate, resources=resources))
    builder.add_node("reflect", partial(reflect, resources=resources))
    builder.add_node("backprop", backprop)
    builder.add_node("finish", finish)
    builder.add_conditional_edges(START, route_start)
    builder.add_conditional_edges("select", route_after_select)
    builder.add_conditional_edges("expand", route_after_expand)
    builder.add_edge("act", "evaluate")
    builder.add_conditional_edges("evaluate", route_after_evaluate)
    builder.add_conditional_edges("reflect", route_after_reflect)
    builder.add_edge("backprop", "select")
    builder.add_edge("finish", END)
    return builder


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    model: BaseChatModel | str | None = None,
    wiki: WikiSource | str | None = None,
    interrupt_before: list[str] | None = None,
    exemplars: tuple[EpisodeExemplar, ...] | None = None,
) -> EpisodeGraph:
    """Compile the LATS graph (same arguments as `wikireact.graph.build_graph`).

    Args:
        checkpointer: e.g. `SqliteSaver(conn)`; makes every search a resumable thread.
        model: a LangChain chat model or a `provider:model` string; default: `Context.model`.
        wiki: a `WikiSource` or a source string; default: `Context.wiki`.
        interrupt_before: nodes to pause before (e.g. `["act"]`); to pause before each
            Search/Lookup with a decision, run with `Context(approve=True)`.
        exemplars: the expansion prompt's few-shot episodes; default: wikireact's own.
    """
    resources = Resources.given(model, wiki, exemplars)
    compiled = make_builder(resources).compile(
        checkpointer=checkpointer, interrupt_before=interrupt_before, name=NAME
    )
    return as_episode_graph(cast(Any, compiled))


builder = make_builder()
graph = as_episode_graph(cast(Any, builder.compile(name=NAME)))
