"""Step events of a nested ReAct episode, passed on to the caller's own `custom` stream.

Plan-and-Execute's sub-goals and Reflexion's trials are whole ReAct episodes run inside a
node. Their step events (`wikireact.nodes.observe`) stream under the nested run's namespace,
seen only with `subgraphs=True`. `StepForwarder`, a callback on the nested run, passes each
on to the caller's stream too, numbered in the whole episode and tagged with its sub-goal
or trial, so every agent streams one step event per step at the top level. Its status
there is `running`: the caller decides the episode's outcome.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.config import get_config
from langgraph.types import StreamWriter

from wikireact.nodes.observe import STEP_EVENT


class StepForwarder(BaseCallbackHandler):
    """Passes a nested episode's step events on to the caller's `custom` stream (see the module)."""

    def __init__(self, writer: StreamWriter, steps_before: int, **tags: Any) -> None:
        """Forward to `writer`, numbering steps after `steps_before`, with `tags` (sub-goal, trial).

        Made inside the caller's node: its config is kept, since LangGraph's writer tells the
        namespace of an event by the config current when it is written.
        """
        self.writer, self.steps_before, self.tags = writer, steps_before, tags
        self.config = get_config()

    def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: Any = None,
        metadata: Any = None,
        **kwargs: Any,
    ) -> None:
        """Write a step event, renumbered, to the caller's stream, in the caller's namespace."""
        if (
            name != STEP_EVENT
            or not isinstance(data, Mapping)
            or not isinstance(data.get("step"), int)
        ):
            return
        event = {**data, "step": self.steps_before + data["step"], **self.tags, "status": "running"}
        token = var_child_runnable_config.set(self.config)
        try:
            self.writer(event)
        finally:
            var_child_runnable_config.reset(token)
