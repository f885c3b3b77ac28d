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
runs. Both are `RewooGraph`s: `EpisodeGraph`s (`wikireact.episode.compiled`) whose runs
are checked at the door (`wikireact.episode.admission`), like ReAct's, and whose door
also refuses the tools protocol (`settings`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Send

from wikireact.agents.rewoo.budgets import can_go_on
from wikireact.agents.rewoo.limits import MIN_RECURSION_LIMIT as MIN_RECURSION_LIMIT
from wikireact.agents.rewoo.planner import plan
from wikireact.agents.rewoo.scheduler import schedule
from wikireact.agents.rewoo.settings import check_settings
from wikireact.agents.rewoo.solver import solve
from wikireact.agents.rewoo.state import RewooOutput, RewooState
from wikireact.agents.rewoo.worker import WorkerInput, work
from wikireact.context import Context
from wikireact.episode.admission import Thread, thread_of
from wikireact.episode.compiled import EpisodeGraph, EpisodeStateGraph, as_episode_graph
from wikireact.episode.recursion import declare_least_limit
from wikireact.episode.resources import Resources
from wikireact.episode.stored_context import settle
from wikireact.prompting.exemplars import EpisodeExemplar, PlanExemplar
from wikireact.state import InputState
from wikireact.wiki.base import WikiSource

NAME = "wikireact-rewoo"
ROUND_WORKERS = 8
"""`max_concurrency` of a run: the steps of one round that run at the same time (and the
threads that save checkpoints; see `wikireact.episode.compiled`)."""
declare_least_limit(RewooState, "ReWOO", MIN_RECURSION_LIMIT)


class RewooGraph(EpisodeGraph):
    """The compiled ReWOO graph: an `EpisodeGraph` whose door also refuses what ReWOO cannot run.

    The settings a run would use (the thread's kept ones with the run's changes) are
    checked by `settings.check_settings` first: the tools protocol is refused with one
    line (`ConfigurationError`) before LangGraph touches the thread. A stopped episode is
    reopened by ReWOO's rule (`budgets.can_go_on`): out of budget, it goes on once the run
    raises the budget that stopped it, whatever its step count.
    """

    continues = staticmethod(can_go_on)

    def stream(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Check the run's settings, then run as an `EpisodeGraph`."""
        thread = _own_thread(self.checkpointer, config)
        stored = self.get_state(thread.state_config).values if thread else {}
        check_settings(settle(stored.get("context"), _run_context(context)))
        yield from super().stream(input, config, context=context, **kwargs)

    async def astream(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Check the run's settings, then run as an `EpisodeGraph`."""
        thread = _own_thread(self.checkpointer, config)
        stored = (await self.aget_state(thread.state_config)).values if thread else {}
        check_settings(settle(stored.get("context"), _run_context(context)))
        async for chunk in super().astream(input, config, context=context, **kwargs):
            yield chunk


def _own_thread(saver: Any, config: RunnableConfig | None) -> Thread | None:
    """Return the top-level thread a run works on (None: no thread, or a task of a parent graph)."""
    thread = thread_of(saver, config)
    return thread if thread is not None and not thread.nested else None


def _run_context(context: Any) -> Any:
    """Return the run's context: the one given, else a parent graph's (None at the top)."""
    if context is not None:
        return context
    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a graph's task
        return None
    return runtime.context if runtime is not None else None


def route_start(
    state: RewooState, runtime: Runtime[Context]
) -> Literal["plan", "schedule", "__end__"]:
    """Plan a new episode; continue a stopped one from its plan; an ended one stays ended.

    An episode stopped before the recursion limit, out of context or out of a budget the
    run raises, after a valid plan, goes on at `schedule` (its recorded steps stay, the rest
    run); one stopped before it had a valid plan plans (again).
    """
    if not can_go_on(state, settle(state.get("context"), runtime.context)):
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
) -> RewooGraph:
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
    return as_episode_graph(compiled, RewooGraph).with_config(max_concurrency=ROUND_WORKERS)


builder = make_builder()
graph = as_episode_graph(builder.compile(name=NAME), RewooGraph).with_config(
    max_concurrency=ROUND_WORKERS
)
