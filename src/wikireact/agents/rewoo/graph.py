"""ReWOO (Reasoning WithOut Observation) as a LangGraph graph: plan -> schedule <-> work -> solve.

- `plan`: one model call writes the whole plan (`Plan:` lines and `#E<n> = Tool[input]`).
  An invalid plan is planned once more; a second invalid plan ends the episode
  (`invalid_plan`).
- `schedule`: records the steps that finished and chooses the next round; `route_schedule`
  fans the round out to `work` with one `Send` per step, so independent steps run at the
  same time (in one superstep); when every step is recorded it goes to `solve`.
- `work`: runs one step (Search/Lookup against Wikipedia, with approval when it is on;
  LLM: one model call).
- `solve`: one model call over the question, the plan and the evidence, ending with
  `Finish[answer]`.

A plan without LLM steps costs exactly 2 model calls. A run stopped before its recursion
limit (status `recursion_limit`, `limits`) is continued by a later run: `route_start` goes
back to `schedule` once the episode has a plan. `graph` (module level, no checkpointer) is
what `langgraph.json` serves; `build_graph(checkpointer=...)` gives standalone, resumable
runs. Both are `EpisodeGraph`s (`wikireact.episode.compiled`): runs
are checked at the door (`wikireact.episode.admission`), like ReAct's.
"""

from __future__ import annotations

from functools import partial
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START
from langgraph.types import Send

from wikireact.agents.rewoo.limits import MIN_RECURSION_LIMIT as MIN_RECURSION_LIMIT
from wikireact.agents.rewoo.planner import plan
from wikireact.agents.rewoo.scheduler import schedule
from wikireact.agents.rewoo.solver import solve
from wikireact.agents.rewoo.state import RewooOutput, RewooState
from wikireact.agents.rewoo.worker import WorkerInput, work
from wikireact.context import Context
from wikireact.episode.compiled import EpisodeGraph, EpisodeStateGraph
from wikireact.episode.resources import Resources
from wikireact.prompting.exemplars import EpisodeExemplar, PlanExemplar
from wikireact.state import ENDED, InputState
from wikireact.wiki.base import WikiSource

NAME = "wikireact-rewoo"
ROUND_WORKERS = 8
"""`max_concurrency` of a run: the steps of one round that run at the same time (and the
threads that save checkpoints; see `wikireact.episode.compiled`)."""


def route_start(state: RewooState) -> Literal["plan", "schedule", "__end__"]:
    """Plan a new episode; continue a stopped one from its plan; an ended one stays ended.

    An episode stopped before the recursion limit after a valid plan goes on at
    `schedule` (its recorded steps stay, the rest run); one stopped before it had a valid
    plan plans (again).
    """
    if state.get("status") in ENDED:
        return "__end__"
    return "schedule" if state.get("plan") else "plan"


def route_plan(state: RewooState) -> Literal["plan", "schedule", "__end__"]:
    """Run a valid plan; plan again after an invalid one, unless the episode has ended."""
    if state.get("status") != "running":
        return "__end__"
    return "plan" if state.get("plan_error") else "schedule"


def route_schedule(state: RewooState) -> list[Send] | Literal["solve", "__end__"]:
    """Fan the round out to workers (one `Send` each); solve once every step is recorded."""
    if state.get("status") != "running":
        return "__end__"
    tasks = state.get("round") or []
    if tasks:
        return [Send("work", WorkerInput(task=task)) for task in tasks]
    return "solve"


def make_builder(
    resources: Resources | None = None, plan_exemplars: tuple[PlanExemplar, ...] | None = None
) -> EpisodeStateGraph:
    """Return the uncompiled graph; `resources` fixes the model and/or source instead of `Context`.

    `plan_exemplars`: the planner's example plans (None: wikireact's own).
    """
    resources = resources or Resources()
    builder = EpisodeStateGraph(
        RewooState,  # type: ignore[arg-type]  # EpisodeStateGraph is typed for ReAct's State
        context_schema=Context,
        input_schema=InputState,
        output_schema=RewooOutput,
    )
    builder.add_node("plan", partial(plan, resources=resources, examples=plan_exemplars))
    builder.add_node("schedule", schedule)
    builder.add_node(
        "work",
        partial(work, resources=resources),
        input_schema=WorkerInput,
    )
    builder.add_node("solve", partial(solve, resources=resources))
    builder.add_conditional_edges(START, route_start)
    builder.add_conditional_edges("plan", route_plan)
    builder.add_conditional_edges("schedule", route_schedule, ["work", "solve", END])
    builder.add_edge("work", "schedule")
    builder.add_edge("solve", END)
    return builder


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    model: BaseChatModel | str | None = None,
    wiki: WikiSource | str | None = None,
    interrupt_before: list[str] | None = None,
    exemplars: tuple[EpisodeExemplar, ...] | None = None,
    plan_exemplars: tuple[PlanExemplar, ...] | None = None,
) -> EpisodeGraph:
    """Compile the ReWOO graph (same arguments as `wikireact.graph.build_graph`).

    Args:
        checkpointer: e.g. `SqliteSaver(conn)`; makes every episode a resumable thread.
        model: a LangChain chat model or a `provider:model` string; default: `Context.model`.
        wiki: a `WikiSource` or a source string; default: `Context.wiki`.
        interrupt_before: nodes to pause before (e.g. `["work"]`), for step-through.
        exemplars: ReAct's few-shot episodes: accepted for the same signature, not used.
        plan_exemplars: the planner's example plans (`--prompts FILE`'s `rewoo_*` key);
            default: wikireact's own (`wikireact.prompting.exemplars.default_plans`).
    """
    resources = Resources.given(model, wiki)
    compiled = make_builder(resources, plan_exemplars).compile(
        checkpointer=checkpointer, interrupt_before=interrupt_before, name=NAME
    )
    return compiled.with_config(max_concurrency=ROUND_WORKERS)


builder = make_builder()
graph = builder.compile(name=NAME).with_config(max_concurrency=ROUND_WORKERS)
