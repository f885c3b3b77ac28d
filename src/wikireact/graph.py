"""The ReAct loop as a LangGraph state machine: reason -> parse -> act -> observe -> reason.

Routers:
- `route_after_parse`: a new Search/Lookup goes to `act`; an invalid output, a Finish
  or a repeat (see `wikireact.progress`) goes straight to `observe` (nothing is executed).
- `route_after_observe`: back to `reason` while the episode runs; END once it is
  finished, halted for repetition or out of budget.

`graph` (module level, no checkpointer) is what `langgraph.json` serves; use
`build_graph(checkpointer=...)` for standalone, resumable runs.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from wikireact.context import Context
from wikireact.exemplars import EpisodeExemplar
from wikireact.models import load_chat_model
from wikireact.nodes import act, observe, parse, reason
from wikireact.react_graph import SAVE_THREADS, ReActGraph, as_react_graph
from wikireact.resources import Resources
from wikireact.state import InputState, OutputState, State, episode_ended
from wikireact.wiki.base import WikiSource
from wikireact.wiki.factory import open_source

OUTPUT_KEYS = tuple(OutputState.__annotations__)
"""The channels `invoke` returns (the output schema)."""


def route_after_parse(state: State) -> Literal["act", "observe"]:
    """Execute only a valid Search/Lookup that is not a repeat (parse left its kind open)."""
    current = state.get("current") or {}
    if current.get("action") is None or current.get("kind") is not None:
        return "observe"
    return "act"


def route_after_observe(state: State) -> Literal["reason", "__end__"]:
    """Loop while the episode is running; stop when it has ended for any reason."""
    return "reason" if state.get("status") == "running" else "__end__"


def make_builder(
    resources: Resources | None = None,
) -> StateGraph[State, Context, InputState, OutputState]:
    """Return the uncompiled graph; `resources` fixes the model and/or source instead of `Context`."""
    resources = resources or Resources()
    builder = StateGraph(
        State, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("reason", partial(reason, resources=resources))
    builder.add_node("parse", parse)
    builder.add_node("act", partial(act, resources=resources))
    builder.add_node("observe", observe)
    builder.add_edge(START, "reason")
    builder.add_edge("reason", "parse")
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
) -> ReActGraph:
    """Compile the ReAct graph (its `invoke` saves checkpoints on one thread: `ReActGraph`).

    Args:
        checkpointer: e.g. `SqliteSaver(conn)`; makes every episode a resumable thread.
        model: a LangChain chat model or a `provider:model` string; default: `Context.model`.
        wiki: a `WikiSource` or a source string (`live`, `offline`, `PATH.db`);
            default: `Context.wiki`.
        interrupt_before: nodes to pause before (e.g. `["act"]`), for step-through.
        exemplars: few-shot example episodes (`wikireact.exemplars`); default: wikireact's own.
    """
    resources = Resources(
        model=load_chat_model(model) if isinstance(model, str) else model,
        wiki=open_source(wiki) if isinstance(wiki, str) else wiki,
        exemplars=exemplars,
    )
    return as_react_graph(
        make_builder(resources).compile(
            checkpointer=checkpointer, interrupt_before=interrupt_before, name="wikireact"
        )
    )


def run_to_end(
    graph: CompiledStateGraph[State, Context, InputState, OutputState],
    question: str,
    config: RunnableConfig,
    context: Context | None = None,
) -> dict[str, Any]:
    """Start the thread's episode, or resume it if it has not ended; return its final output.

    The output is the episode's values of the output schema (`OutputState`: answer, status,
    steps, trajectory, usage, audit), as `invoke` returns them; for an episode that had
    already ended, the same values read from its last checkpoint (the full state is
    `graph.get_state(config).values`). Checkpoints are saved with durability "sync". Resumption
    is decided by the episode's status (`episode_ended`), not by `StateSnapshot.next`,
    which is empty after a crash between a node's saved writes and the next checkpoint.

    The run saves on one thread (`SAVE_THREADS`, see `wikireact.react_graph`), whichever
    compiled graph it is given.
    """
    values = graph.get_state(config).values
    if values and episode_ended(values):
        return {key: values[key] for key in OUTPUT_KEYS if key in values}
    return dict(
        graph.invoke(
            None if values else {"question": question},
            {**config, "max_concurrency": SAVE_THREADS},
            context=context,
            durability="sync",
        )
    )


builder = make_builder()
graph = builder.compile(name="wikireact")
