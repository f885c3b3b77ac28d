"""One candidate step run from its parent's state through ReAct's own nodes.

The candidate's text goes where ReAct's `reason` puts the model's reply (`current.raw`),
then ReAct's `parse` (the same parser, FEVER labels, the repetition rule), `act` when
`route_after_parse` sends it there (the approval gate, the environment, the observation
fence and cap), and `observe` (the step's status, its audit record, the live step event)
run on the parent's ReAct state, folded from the tree (`tree.react_state`). Their writes
are merged as LangGraph's reducers would merge them; the child keeps them (`KEPT`). The
live step event `observe` would write (numbered in its branch) is not streamed: the search's
`act` streams its own, numbered in the whole search.

The candidates of LATS are text under both protocols (as ReWOO's plan is): the nodes are
given the run's settings with `protocol="text"`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from wikireact.context import Context
from wikireact.episode.resources import Resources
from wikireact.graph import route_after_parse
from wikireact.nodes import act, observe, parse
from wikireact.state import State, merge_dicts, new_step


def text_context(context: Context) -> Context:
    """Return the run's settings as the candidates' steps run them (the text protocol)."""
    return Context.read({**context.as_dict(), "protocol": "text"})


def run_candidate(
    parent: Mapping[str, Any],
    raw: str,
    runtime: Runtime[Context],
    config: RunnableConfig,
    resources: Resources,
) -> dict[str, Any]:
    """Run the step `raw` from the ReAct state `parent`; return the state's writes, merged.

    The result holds `current` (the step as parsed and run), act's environment writes
    (page, cursors, pages read) and observe's (trajectory, usage, audit, steps,
    proposals, status, answer). `parent["context"]` must be `text_context`'s settings.
    """
    own = runtime.override(context=Context.read(parent["context"]), stream_writer=_unstreamed)
    state: dict[str, Any] = {**parent, "current": new_step(raw=raw)}
    writes: dict[str, Any] = {}
    _apply(state, writes, parse(_as_state(state), own))
    if route_after_parse(_as_state(state)) == "act":
        _apply(state, writes, act(_as_state(state), own, config, resources))
    _apply(state, writes, observe(_as_state(state), own))
    return writes


def _unstreamed(event: Any) -> None:
    """Drop a branch-numbered step event (the search streams its own)."""


def _apply(state: dict[str, Any], writes: dict[str, Any], update: Mapping[str, Any]) -> None:
    """Merge a node's `update` into `state` and `writes` (`current` key by key; others replace)."""
    for key, value in update.items():
        if key == "current":
            state[key] = merge_dicts(state.get(key) or {}, [value])
            writes[key] = merge_dicts(writes.get(key) or {}, [value])
        else:
            state[key] = value
            writes[key] = value


def _as_state(state: dict[str, Any]) -> State:
    return state  # type: ignore[return-value]
