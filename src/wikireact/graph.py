"""The ReAct loop as a LangGraph state machine: reason -> parse -> act -> observe -> reason.

Routers:
- `route_start`: a new episode, or one that can go on (stopped before the recursion limit,
  or out of a budget the run's context raises), goes to `reason`; an ended one to END.
- `route_after_reason`: to `parse`, or END when the prompt could not fit the model's
  context window (status `context_exhausted`: resumable with a larger window).
- `route_after_parse`: a new Search/Lookup goes to `act`; an invalid output, a Finish
  or a repeat (see `wikireact.wiki.repetition`) goes straight to `observe` (nothing is executed).
- `route_after_observe`: back to `reason` while the episode runs; END once it is
  finished, halted for repetition or out of budget, or when another step might not fit
  in the run's recursion limit (status `recursion_limit`: resumable).

`graph` (module level, no checkpointer) is what `langgraph.json` serves; use
`build_graph(checkpointer=...)` for standalone, resumable runs. Both are `EpisodeGraph`s
(`wikireact.episode.compiled`): runs are checked at the door (`wikireact.episode.admission`).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from wikireact.context import Context
from wikireact.episode.admission import REOPENED_THROUGH_START, check_question
from wikireact.episode.compiled import SAVE_WORKERS, EpisodeGraph, EpisodeStateGraph
from wikireact.episode.recursion import REACT_LEAST_LIMIT
from wikireact.episode.resources import Resources
from wikireact.episode.stored_context import can_continue, settle
from wikireact.nodes import act, observe, parse, reason
from wikireact.prompting.exemplars import EpisodeExemplar
from wikireact.state import CurrentStep, InputState, OutputState, State, Status
from wikireact.wiki.base import WikiSource

OUTPUT_KEYS = tuple(OutputState.__annotations__)
"""The channels `invoke` returns (the output schema)."""
MIN_RECURSION_LIMIT = REACT_LEAST_LIMIT
"""The least `recursion_limit` (the door's): START, then one step whose `observe` still has a
superstep left to end the run in (`wikireact.episode.recursion`)."""


def route_start(state: State, runtime: Runtime[Context]) -> Literal["reason", "__end__"]:
    """Start or continue the thread's episode; one that has ended stays ended (its output is returned)."""
    settings = settle(state.get("context"), runtime.context)
    return "reason" if can_continue(state, settings) else "__end__"


class StatusView(TypedDict, total=False):
    """What `route_after_reason` and `route_after_observe` read: the status.

    A router's first parameter's type is the state it is given (LangGraph reads only these
    channels, with the node's writes applied), so a router of a long episode does not get
    its trajectory, usage and audit lists rebuilt with the node's writes every step
    (bench/step_length.py).
    """

    status: Status


class CurrentView(TypedDict, total=False):
    """What `route_after_parse` reads: the step in progress."""

    current: CurrentStep


def route_after_reason(state: StatusView) -> Literal["parse", "__end__"]:
    """Parse the reply; end the run when the prompt could not fit the context window (no reply)."""
    return "__end__" if state.get("status") == "context_exhausted" else "parse"


def route_after_parse(state: CurrentView) -> Literal["act", "observe"]:
    """Execute only a valid Search/Lookup that is not a repeat (parse left its kind open)."""
    current = state.get("current") or {}
    if current.get("action") is None or current.get("kind") is not None:
        return "observe"
    return "act"


def route_after_observe(state: StatusView) -> Literal["reason", "__end__"]:
    """Loop while the episode is running; stop when it has ended for any reason."""
    return "reason" if state.get("status") == "running" else "__end__"


def make_builder(
    resources: Resources | None = None, input_schema: type[InputState] = InputState
) -> EpisodeStateGraph:
    """Return the uncompiled graph; `resources` fixes the model and/or source instead of `Context`.

    `input_schema`: `InputState` (the question), or `EpisodeInput` for an agent that runs
    episodes with lessons (Reflexion).
    """
    resources = resources or Resources()
    builder = EpisodeStateGraph(
        State, context_schema=Context, input_schema=input_schema, output_schema=OutputState
    )
    builder.add_node("reason", partial(reason, resources=resources))
    builder.add_node("parse", parse)
    builder.add_node("act", partial(act, resources=resources))
    builder.add_node("observe", observe)
    builder.add_conditional_edges(START, route_start)
    builder.add_conditional_edges("reason", route_after_reason)
    builder.add_conditional_edges("parse", route_after_parse)
    builder.add_edge("act", "observe")
    builder.add_conditional_edges("observe", route_after_observe)
    return builder


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    model: BaseChatModel | str | None = None,
    wiki: WikiSource | str | None = None,
    interrupt_before: list[str] | None = None,
    exemplars: tuple[EpisodeExemplar, ...] | None = None,
) -> EpisodeGraph:
    """Compile the ReAct graph (its `invoke` saves checkpoints on one thread: `EpisodeGraph`).

    Args:
        checkpointer: e.g. `SqliteSaver(conn)`; makes every episode a resumable thread.
        model: a LangChain chat model or a `provider:model` string; default: `Context.model`.
        wiki: a `WikiSource` or a source string (`live`, `offline`, `PATH.db`);
            default: `Context.wiki`.
        interrupt_before: nodes to pause before (e.g. `["act"]`), for step-through.
        exemplars: few-shot example episodes (`wikireact.prompting.exemplars`); default: wikireact's own.
    """
    resources = Resources.given(model, wiki, exemplars)
    return make_builder(resources).compile(
        checkpointer=checkpointer, interrupt_before=interrupt_before, name="wikireact"
    )


def run_to_end(
    graph: CompiledStateGraph[State, Context, InputState, OutputState],
    question: str,
    config: RunnableConfig,
    context: Context | dict[str, Any] | None = None,
    inputs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Start the thread's episode, or continue it if it can go on; return its final output.

    `inputs` are the agent's own input fields beside the question, given when the episode
    starts (e.g. Reflexion's `gold_answer`); a continued episode keeps those it started with.

    The output is the episode's values of the graph's output schema (ReAct's `OutputState`:
    answer, status, steps, trajectory, usage, audit; another agent's own), as `invoke` returns them; for an episode that had
    already ended, the same values read from its last checkpoint (the full state is
    `graph.get_state(config).values`). Checkpoints are saved with durability "sync". Whether
    the episode goes on is decided by its status (`can_continue`: running, stopped before
    the recursion limit, or out of a budget `context` raises), not by `StateSnapshot.next`,
    which is empty after a crash between a node's saved writes and the next checkpoint.
    A thread that holds another question is refused (`ConfigurationError`): one thread
    holds one episode.

    The run saves on one thread (`SAVE_WORKERS`, see `wikireact.episode.compiled`), unless
    the graph's config sets `max_concurrency` (an agent whose steps run at the same time).
    Any agent's `EpisodeGraph` can be run this way.
    """
    values = graph.get_state(config).values
    if values:
        check_question((config.get("configurable") or {}).get("thread_id"), values, question)
        if not can_continue(values, settle(values.get("context"), context)):
            keys = graph.output_channels if isinstance(graph.output_channels, list) else OUTPUT_KEYS
            return {key: values[key] for key in keys if key in values}
    reopen = not values or values.get("status") in REOPENED_THROUGH_START
    run_config: RunnableConfig = {**config}
    if "max_concurrency" not in (graph.config or {}):
        run_config["max_concurrency"] = SAVE_WORKERS
    return dict(
        graph.invoke(
            cast(InputState, {"question": question, **(inputs or {})}) if reopen else None,
            run_config,
            context=Context.read(context) if context is not None else None,
            durability="sync",
        )
    )


builder = make_builder()
graph = builder.compile(name="wikireact")
