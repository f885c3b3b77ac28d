"""`EpisodeGraph`: the compiled ReAct graph, with a door and a lean `invoke`.

Every compiled wikireact graph is one (`build_graph(...)`, and `graph` and `builder.compile()`
of `wikireact.graph`). It differs from a `CompiledStateGraph` in three ways:

- `stream`/`astream` (so `invoke`, `ainvoke`, `batch`, `astream_events`, and a parent graph
  running it as a node) check each run at the door first (`wikireact.episode.admission`): the
  context, one episode per thread, one run per thread, approval without a checkpointer, a
  recursion limit below the agent's least (`least_limit`, `wikireact.episode.recursion`);
  and each setting in its place, none in `config["configurable"]` (`wikireact.episode.placement`).
- A run given no `recursion_limit` (neither in its config nor by a parent graph it runs in)
  gets `wikireact.context.RECURSION_LIMIT`, room for a budget of `MAX_STEPS` steps
  (LangGraph's default, 10,007 supersteps, would stop an episode at 2,501 steps). A limit
  given by the caller or a parent applies as given (see `wikireact.episode.admission`).
- `invoke`/`ainvoke` return pending interrupts as `InterruptRecord`s (dicts that also
  have `.value` and `.id`), so a paused output is JSON-serialisable.
- `invoke` saves checkpoints on one thread. A LangGraph run starts a thread pool for the
  saves of its checkpoints (`put_writes` and `put` of every superstep, handed off to it).
  With the pool's default size a run starts two or three threads and a checkpoint's save
  waits on its writes' save in another thread; with `max_concurrency=1` both run in order
  on one thread (the order LangGraph enforces anyway), started once per run: per step
  ~0.2 ms of CPU less with durability "sync", ~0.6 ms with the default durability
  (bench/step_overhead.py). Only `invoke` does this, and only when neither the caller nor
  the graph's own config (`with_config`, e.g. an agent that fans steps out to run at the
  same time) set `max_concurrency`, and the run streams no `custom`/`messages` events:
  such a run parks a waiter on the pool, and one thread would then never run the node.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, TypeVar, overload

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.graph.state import CompiledStateGraph, StateGraph
from langgraph.types import Interrupt

from wikireact.context import RECURSION_LIMIT, Context
from wikireact.episode.admission import Continues, admit, hold, thread_of, thread_seen
from wikireact.episode.placement import check_configurable, check_placement, input_fields
from wikireact.episode.recursion import LeastLimit, least_limit_of
from wikireact.episode.stored_context import can_continue
from wikireact.state import InputState, OutputState, State
from wikireact.storage.registry import GRAPH_METADATA_KEY

SAVE_WORKERS = 1
"""`max_concurrency` of a non-streaming run: the threads LangGraph saves checkpoints on."""
WAITER_FREE_MODES = frozenset({"values", "updates", "checkpoints", "tasks", "debug"})
"""Stream modes that do not park a waiter on the run's thread pool."""
INTERRUPT_KEY = "__interrupt__"


class InterruptRecord(dict[str, Any]):
    """A pending interrupt as plain data (`{"value": ..., "id": ...}`), read also as `.value`/`.id`."""

    @property
    def value(self) -> Any:
        """The interrupt's payload (for approval: the proposed action and its episode)."""
        return self["value"]

    @property
    def id(self) -> str:
        """The interrupt's id: resume several at once with `Command(resume={id: value, ...})`."""
        return str(self["id"])


class EpisodeGraph(CompiledStateGraph[State, Context, InputState, OutputState]):
    """The compiled ReAct graph (a `CompiledStateGraph`); see the module docstring."""

    continues: Continues = staticmethod(can_continue)
    """Whether a stopped episode has work left under a run's settings: the door reopens it
    then (an agent whose steps count differently declares its own rule)."""

    @property
    def least_limit(self) -> LeastLimit:
        """The least `recursion_limit` of this graph's agent (declared for its state schema)."""
        return least_limit_of(self.builder.state_schema)

    def stream(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Check the run at the door (`wikireact.episode.admission`), then stream it as LangGraph does."""
        check_placement(input, context, input_fields(self.builder.input_schema))
        check_configurable(config, context)
        config = named_in_checkpoints(with_default_limit(config), self.name)
        thread = thread_of(self.checkpointer, config)
        with hold(thread):
            seen = None
            if thread is not None and not thread.nested:
                seen = thread_seen(self.get_state(thread.state_config))
            run = admit(input, config, context, thread, seen, self.least_limit, self.continues)
            yield from super().stream(run.input, config, context=run.context, **kwargs)

    async def astream(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Check the run at the door (`wikireact.episode.admission`), then stream it as LangGraph does."""
        check_placement(input, context, input_fields(self.builder.input_schema))
        check_configurable(config, context)
        config = named_in_checkpoints(with_default_limit(config), self.name)
        thread = thread_of(self.checkpointer, config)
        with hold(thread):
            seen = None
            if thread is not None and not thread.nested:
                seen = thread_seen(await self.aget_state(thread.state_config))
            run = admit(input, config, context, thread, seen, self.least_limit, self.continues)
            async for chunk in super().astream(run.input, config, context=run.context, **kwargs):
                yield chunk

    def invoke(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        stream_mode: Any = "values",
        **kwargs: Any,
    ) -> Any:
        """Run the graph to its end (or interrupt), saving on one thread unless told otherwise."""
        modes = {stream_mode} if isinstance(stream_mode, str) else set(stream_mode)
        if (
            modes <= WAITER_FREE_MODES
            and not self.stream_eager
            and "max_concurrency" not in (config or {})
            and "max_concurrency" not in (self.config or {})
        ):
            config = {**(config or {}), "max_concurrency": SAVE_WORKERS}
        return as_json_output(super().invoke(input, config, stream_mode=stream_mode, **kwargs))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the graph to its end (or interrupt), asynchronously."""
        return as_json_output(await super().ainvoke(input, config, **kwargs))


def with_default_limit(config: RunnableConfig | None) -> RunnableConfig | None:
    """Return `config` with `RECURSION_LIMIT` unless it, or a parent run's config, sets a limit."""
    inherited = var_child_runnable_config.get() or {}
    if "recursion_limit" in (config or {}) or "recursion_limit" in inherited:
        return config
    return {**(config or {}), "recursion_limit": RECURSION_LIMIT}


def named_in_checkpoints(config: RunnableConfig | None, name: str) -> RunnableConfig:
    """Return `config` whose metadata names the graph (`GRAPH_METADATA_KEY`) in every checkpoint.

    So the checkpoints of a thread the CLI did not start (a library run) say which agent
    runs it (`wikireact.agents.thread_record`). A name already there (a parent wikireact graph
    running this one as a nested episode) is kept.
    """
    metadata = (config or {}).get("metadata") or {}
    if GRAPH_METADATA_KEY in metadata:
        return config or {}
    return {**(config or {}), "metadata": {**metadata, GRAPH_METADATA_KEY: name}}


def as_json_output(output: Any) -> Any:
    """Return `invoke`'s output with its pending interrupts as `InterruptRecord`s."""
    if not isinstance(output, dict) or not isinstance(output.get(INTERRUPT_KEY), list | tuple):
        return output
    pending = [
        InterruptRecord(value=i.value, id=i.id) if isinstance(i, Interrupt) else i
        for i in output[INTERRUPT_KEY]
    ]
    return {**output, INTERRUPT_KEY: pending}


GraphT = TypeVar("GraphT", bound=EpisodeGraph)


class EpisodeStateGraph(StateGraph[State, Context, InputState, OutputState]):
    """The uncompiled ReAct graph; `compile` returns a `EpisodeGraph`."""

    def compile(self, *args: Any, **kwargs: Any) -> EpisodeGraph:
        """Compile as LangGraph does, as a `EpisodeGraph`."""
        return as_episode_graph(super().compile(*args, **kwargs))


@overload
def as_episode_graph(compiled: CompiledStateGraph[Any, Context, Any, Any]) -> EpisodeGraph: ...


@overload
def as_episode_graph(
    compiled: CompiledStateGraph[Any, Context, Any, Any], kind: type[GraphT]
) -> GraphT: ...


def as_episode_graph(
    compiled: CompiledStateGraph[Any, Context, Any, Any],
    kind: type[EpisodeGraph] = EpisodeGraph,
) -> EpisodeGraph:
    """Return an `EpisodeGraph` (or its subclass `kind`) built from `compiled`'s parts.

    `compiled` itself is unchanged. An agent with its own state (`wikireact.agents`) is
    compiled as a `StateGraph` of that state and passed here.

    The same construction LangGraph's own `Pregel.copy` uses: a compiled graph is its
    constructor's arguments, so a graph of the subclass is built from them; no object
    changes its class.
    """
    parts = {key: value for key, value in compiled.__dict__.items() if key != "__orig_class__"}
    return kind(**parts)
