"""`ReActGraph`: the compiled graph `build_graph` returns; its `invoke` saves on one thread.

A LangGraph run starts a thread pool for the saves of its checkpoints (`put_writes` and
`put` of every superstep, handed off to it). With the pool's default size a run starts two
or three threads and a checkpoint's save waits on its writes' save in another thread; with
`max_concurrency=1` both run in order on one thread (the order LangGraph enforces anyway),
started once per run: per step ~0.2 ms of CPU less with durability "sync", ~0.6 ms with
the default durability (bench/step_overhead.py).

Only `invoke` does this, and only when the caller set no `max_concurrency` and streams no
`custom`/`messages` events: such a run parks a waiter on the pool, and one thread would
then never run the node.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from wikireact.context import Context
from wikireact.state import InputState, OutputState, State

SAVE_THREADS = 1
"""`max_concurrency` of a non-streaming run: the threads LangGraph saves checkpoints on."""
WAITER_FREE_MODES = frozenset({"values", "updates", "checkpoints", "tasks", "debug"})
"""Stream modes that do not park a waiter on the run's thread pool."""


class ReActGraph(CompiledStateGraph[State, Context, InputState, OutputState]):
    """The compiled ReAct graph (a `CompiledStateGraph`); see the module docstring for `invoke`."""

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
        ):
            config = {**(config or {}), "max_concurrency": SAVE_THREADS}
        return super().invoke(input, config, stream_mode=stream_mode, **kwargs)


def as_react_graph(
    compiled: CompiledStateGraph[State, Context, InputState, OutputState],
) -> ReActGraph:
    """Return `compiled` as a `ReActGraph` (the same object: only `invoke` differs)."""
    compiled.__class__ = ReActGraph
    return compiled  # type: ignore[return-value]
