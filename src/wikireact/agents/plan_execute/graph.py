"""The Plan-and-Execute graph: plan -> execute -> replan -> execute ... -> END.

Routers:
- `route_start`: a new episode goes to `plan`; one stopped before the recursion limit to
  `execute` (its next sub-goal, or the one the limit cut, continued), as is one whose
  sub-goal ran out of context (`context_exhausted`); one that can go on (reopened with a
  larger budget or window) to `replan`, which sees its results; an ended one to END.
- `route_after_plan` / `route_after_replan`: a readable plan goes to `execute`; a malformed
  reply is asked again once (back to the same node); an ended episode (Finish, a spent
  budget, two malformed replies) goes to END.
- `route_after_execute`: after `execute` (one sub-goal's ReAct episode, run by the ReAct
  graph as a subgraph), `replan`; END when the recursion limit stopped the episode.

`graph` (module level, no checkpointer) is what `langgraph.json` serves; use
`build_graph(checkpointer=...)` for standalone, resumable runs. Both are
`PlanExecuteGraph`s: `EpisodeGraph`s (`wikireact.episode.compiled`) that also check the
input's limits at the door.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from wikireact.agents.plan_execute.executor import SUPERSTEPS_AFTER, make_executor
from wikireact.agents.plan_execute.planning import plan, replan
from wikireact.agents.plan_execute.prompts import PlanExemplars
from wikireact.agents.plan_execute.state import (
    PLANNING_ATTEMPTS,
    PlanInput,
    PlanOutput,
    PlanState,
    read_limits,
)
from wikireact.context import Context
from wikireact.episode.compiled import EpisodeGraph, as_episode_graph
from wikireact.episode.recursion import declare_least_limit
from wikireact.episode.resources import Resources
from wikireact.episode.stored_context import can_continue, settle
from wikireact.graph import MIN_RECURSION_LIMIT as REACT_MIN_RECURSION_LIMIT
from wikireact.graph import make_builder as make_react_builder
from wikireact.prompting.exemplars import EpisodeExemplar
from wikireact.wiki.base import WikiSource

NAME = "wikireact-plan-execute"
MIN_RECURSION_LIMIT = max(1 + PLANNING_ATTEMPTS + 1 + SUPERSTEPS_AFTER, REACT_MIN_RECURSION_LIMIT)
"""The least `recursion_limit` (the door's): START, the plan and its retry, then an `execute`
with room to run its sub-goal and replan after it (`wikireact.episode.recursion`)."""
declare_least_limit(PlanState, "Plan-and-Execute", MIN_RECURSION_LIMIT)


class PlanExecuteGraph(EpisodeGraph):
    """The compiled Plan-and-Execute graph: an `EpisodeGraph` whose door also reads the limits.

    An input's `max_subgoals`/`subgoal_steps` out of range is refused with one line
    (`ConfigurationError`) before LangGraph touches the thread.
    """

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """Check the input's limits, then run as an `EpisodeGraph`."""
        read_limits(input)
        yield from super().stream(input, config, **kwargs)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Check the input's limits, then run as an `EpisodeGraph`."""
        read_limits(input)
        async for chunk in super().astream(input, config, **kwargs):
            yield chunk


def route_start(
    state: PlanState, runtime: Runtime[Context]
) -> Literal["plan", "execute", "replan", "__end__"]:
    """Plan a new episode; run the sub-goal an episode stopped before; replan one with more budget."""
    settings = settle(state.get("context"), runtime.context)
    if not can_continue(state, settings):
        return "__end__"
    if (state.get("status") == "recursion_limit" and state.get("plan")) or state.get("cut_episode"):
        return "execute"
    return "replan" if state.get("subgoals") else "plan"


def route_after_execute(state: PlanState) -> Literal["replan", "__end__"]:
    """Replan after a sub-goal; stop when the recursion limit stopped the episode."""
    return "replan" if state.get("status") == "running" else "__end__"


def route_after_plan(state: PlanState) -> Literal["execute", "plan", "__end__"]:
    """Run the plan; ask once more after a malformed one; stop once the episode ended."""
    if state.get("status") != "running":
        return "__end__"
    return "plan" if state.get("planning_error") else "execute"


def route_after_replan(state: PlanState) -> Literal["execute", "replan", "__end__"]:
    """Run the remaining plan; ask once more after a malformed reply; stop at Finish or a limit."""
    if state.get("status") != "running":
        return "__end__"
    return "replan" if state.get("planning_error") else "execute"


def make_builder(
    resources: Resources | None = None, plan_exemplars: PlanExemplars | None = None
) -> StateGraph[Any, Context, Any, Any]:
    """Return the uncompiled graph; `resources` fixes the model and/or source instead of `Context`.

    `plan_exemplars` are the planner's and replanner's (default: wikireact's own);
    `resources.exemplars` are the sub-goals' ReAct episodes'.
    """
    resources = resources or Resources()
    react = make_react_builder(resources).compile(name="react")
    builder = StateGraph(
        PlanState, context_schema=Context, input_schema=PlanInput, output_schema=PlanOutput
    )
    builder.add_node("plan", partial(plan, resources=resources, exemplars=plan_exemplars))
    builder.add_node("execute", cast(Any, make_executor(react)))
    builder.add_node("replan", partial(replan, resources=resources, exemplars=plan_exemplars))
    builder.add_conditional_edges(START, route_start)
    builder.add_conditional_edges("plan", route_after_plan)
    builder.add_conditional_edges("execute", route_after_execute)
    builder.add_conditional_edges("replan", route_after_replan)
    return cast(StateGraph[Any, Context, Any, Any], builder)


def compile_graph(
    builder: StateGraph[Any, Context, Any, Any],
    checkpointer: BaseCheckpointSaver | None = None,
    interrupt_before: list[str] | None = None,
) -> PlanExecuteGraph:
    """Compile `builder` as a `PlanExecuteGraph` (built from the compiled graph's parts)."""
    compiled = builder.compile(
        checkpointer=checkpointer, interrupt_before=interrupt_before, name=NAME
    )
    return as_episode_graph(compiled, PlanExecuteGraph)


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    model: BaseChatModel | str | None = None,
    wiki: WikiSource | str | None = None,
    interrupt_before: list[str] | None = None,
    exemplars: tuple[EpisodeExemplar, ...] | None = None,
    plan_exemplars: PlanExemplars | None = None,
) -> PlanExecuteGraph:
    """Compile the Plan-and-Execute graph (same arguments as `wikireact.graph.build_graph`).

    Args:
        checkpointer: e.g. `SqliteSaver(conn)`; makes every episode a resumable thread
            (the sub-goals' ReAct episodes are saved in it too, in their own namespaces).
        model: a LangChain chat model or a `provider:model` string; default: `Context.model`.
        wiki: a `WikiSource` or a source string; default: `Context.wiki`.
        interrupt_before: nodes to pause before (`plan`, `execute`, `replan`).
        exemplars: few-shot ReAct episodes for the sub-goals; default: wikireact's own.
        plan_exemplars: the planner's and replanner's examples (`load_plan_exemplars(FILE)`,
            from a prompt file); default: wikireact's own.
    """
    resources = Resources.given(model, wiki, exemplars)
    return compile_graph(make_builder(resources, plan_exemplars), checkpointer, interrupt_before)


builder = make_builder()
graph = compile_graph(builder)
