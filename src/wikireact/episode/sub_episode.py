"""A ReAct episode a node runs nested (a sub-goal, a trial) that the recursion limit cut, and its continuation.

An episode whose next prompt did not fit the model's window (`context_exhausted`) is cut
the same way: the caller stops `context_exhausted` with its reason, and a run with a larger
window continues inside it.

A nested episode runs with the caller's `recursion_limit` and stops before it with status
`recursion_limit` (`wikireact.nodes.observe`). That is not the episode's outcome: the
caller stops too (status `recursion_limit`, nothing judged, replanned or remembered) and
keeps the checkpoint namespace the episode ran in (`cut_episode`). A run with a larger
limit reopens the caller, whose node runs the episode again in that namespace: LangGraph
loads its checkpoint there, and the episode continues where it was cut (the question it
is given again reopens it, as at the top level), so no step is taken twice. The caller's
own outputs (steps, trajectory, usage, model calls) gain the episode's steps once it ends,
as for an uncut one; until then they are in its checkpoints (`get_state(subgraphs=True)`
while it runs, its namespace after).

Without a checkpointer nothing is kept and nothing can continue; the caller still stops
rather than taking the cut episode as its result.

A nested episode's step events stream under its own namespace, seen only with
`subgraphs=True`; the caller passes them on to its own stream with a callback given here
(`wikireact.agents.nested_steps`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config

CUT_STATUS = "recursion_limit"
"""The status of an episode the recursion limit stopped (resumable, not an outcome)."""
STOPPED_STATUSES = frozenset({CUT_STATUS, "context_exhausted"})
"""Statuses of a nested episode that stopped without an outcome: the recursion limit cut it, or
its next prompt did not fit the model's window. Either way the caller stops with its status
and a run with a larger limit or window continues inside it."""


def sub_episode_config(
    state: Mapping[str, Any],
    metadata: dict[str, Any],
    forwarder: BaseCallbackHandler | None = None,
) -> RunnableConfig:
    """Return the config a node runs its nested episode with: in the cut one's namespace, if any.

    Called inside the node. `state` is the caller's (its `cut_episode`); `metadata` the
    run's (the model-call offset); `forwarder` passes its step events on
    (`wikireact.agents.nested_steps.StepForwarder`). A fresh episode
    inherits the node's task namespace, as LangGraph gives it.
    """
    config: RunnableConfig = {"metadata": metadata}
    if forwarder is not None:
        config["callbacks"] = [forwarder]
    cut = state.get("cut_episode")
    if cut:
        configurable = dict(get_config().get("configurable") or {})
        config["configurable"] = {**configurable, "checkpoint_ns": cut}
    return config


def was_cut(episode: Mapping[str, Any]) -> bool:
    """Whether a nested episode's output says it stopped without an outcome (`STOPPED_STATUSES`)."""
    return episode.get("status") in STOPPED_STATUSES


def cut_update(
    state: Mapping[str, Any], episode: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return the caller's update for a cut episode: stop as it did, and keep where it is.

    Without `episode`, the recursion limit cut it; an episode out of context passes its
    `stop_reason` on.
    """
    namespace = state.get("cut_episode") or (get_config().get("configurable") or {}).get(
        "checkpoint_ns", ""
    )
    status = (episode or {}).get("status", CUT_STATUS)
    stopped = {"stop_reason": (episode or {}).get("stop_reason")} if status != CUT_STATUS else {}
    return {"status": status, "cut_episode": namespace, **stopped}


COMPLETED: dict[str, Any] = {"status": "running", "cut_episode": None}
"""The caller's update once its nested episode ended by itself: it goes on, nothing is cut."""
