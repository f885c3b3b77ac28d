"""The nodes of the search: select, expand, act, evaluate, reflect, backprop, finish.

`expand`, `evaluate` and `reflect` ask the model; a prompt that cannot fit the window, or
that the model refuses as too long, stops the search `context_exhausted` at that node
(`wikireact.nodes.window`), and a run with a larger window goes on from there
(`graph.route_start`).

Each is deterministic given the state (a node re-run on resume computes the same writes;
model calls carry their index in the search, so scripted and cached models answer the
same), and only `act` has side effects: it runs one candidate's action, one child per
superstep, so a child's action once checkpointed is never run again.
"""

from __future__ import annotations

from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from wikireact.agents.lats.answer import best_terminal, depth_reached, final_status
from wikireact.agents.lats.backprop import backpropagate, blank_stats, iteration_reward
from wikireact.agents.lats.candidate import run_candidate, text_context
from wikireact.agents.lats.evaluation import judge_terminal, value_of
from wikireact.agents.lats.expansion import propose, samples
from wikireact.agents.lats.prompts import expansion_request
from wikireact.agents.lats.reflection import write_lesson
from wikireact.agents.lats.settings import search_settings, supersteps_per_iteration
from wikireact.agents.lats.state import (
    CallKind,
    LatsAudit,
    LatsState,
    LatsStep,
    LatsUsage,
    StopReason,
    TreeNode,
)
from wikireact.agents.lats.tree import is_terminal, kept_update, path_to, react_state, root_node
from wikireact.agents.lats.uct import select_leaf
from wikireact.context import Context
from wikireact.episode.resources import Resources
from wikireact.episode.stored_context import episode_context
from wikireact.errors import ContextExhaustedError
from wikireact.evidence import answer_evidence
from wikireact.nodes.reason import fitted_step_prompt
from wikireact.nodes.window import exhausted, reopened
from wikireact.state import State


def select(state: LatsState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Begin an iteration at the leaf UCT picks, or stop the search at a budget."""
    _, kept = episode_context(state, runtime.context)
    settings = search_settings(state)
    update: dict[str, Any] = {**kept, "stopped_by": None}
    tree = list(state.get("tree") or [])
    stats = dict(state.get("stats") or {})
    if not tree:
        tree, stats = [root_node()], {"0": blank_stats()}
        update |= {"tree": tree, "stats": stats, "iteration": 0, "model_calls": 0, "path": []}
    iteration = state.get("iteration", 0)
    stop: StopReason | None = None
    leaf = select_leaf(tree, stats, settings.exploration_weight)
    if iteration >= settings.max_iterations:
        stop = "iterations"
    elif state.get("model_calls", 0) >= settings.max_model_calls:
        stop = "calls"
    elif leaf is None:
        stop = "depth" if depth_reached(tree) else "exhausted"
    elif state.get("remaining_steps", 10**9) <= supersteps_per_iteration(settings.candidates):
        stop = "recursion_limit"  # the next iteration might not fit: stop before LangGraph raises
    if stop is not None or leaf is None:
        return {**update, "stopped_by": stop}
    return {
        **update,
        "selected": leaf,
        "iteration": iteration + 1,
        "candidates_found": [],
        "acted": 0,
    }


def expand(state: LatsState, runtime: Runtime[Context], resources: Resources) -> dict[str, Any]:
    """Ask the model for the selected leaf's candidate next steps."""
    context, _ = episode_context(state, runtime.context)
    settings = search_settings(state)
    leaf = state["selected"]
    parent = _react_state(state, context, leaf)
    model = resources.chat_model(context)
    number, sampled = parent["steps"] + 1, samples(model, context)
    branch = {**parent, "lessons": state.get("reflections") or []}
    request = [] if sampled else [expansion_request(settings.candidates, number)]
    calls = state.get("model_calls", 0)
    try:  # a prompt that cannot fit stops the search; a larger window expands the leaf again
        messages = fitted_step_prompt(  # ReAct's prompt for the leaf, fitted with the request
            cast(State, branch), text_context(context), resources, model, after=request
        ).messages
        proposal = propose(
            model,
            messages,
            n=settings.candidates,
            number=number,
            index=calls,
            sampled=sampled,
            temperature=settings.temperature,
        )
    except ContextExhaustedError as exc:
        return exhausted(exc)
    return {
        **_going_on(state),
        "candidates_found": proposal.candidates,
        "usage": [_usage(leaf, "expand", tokens) for tokens in proposal.calls],
        "model_calls": calls + len(proposal.calls),
    }


def act(
    state: LatsState, runtime: Runtime[Context], config: RunnableConfig, resources: Resources
) -> dict[str, Any]:
    """Run the next candidate's step from the selected leaf; add it to the tree as a child."""
    context, _ = episode_context(state, runtime.context)
    leaf, acted = state["selected"], state.get("acted", 0)
    tree = state["tree"]
    parent = _react_state(state, context, leaf)
    writes = run_candidate(
        parent, state["candidates_found"][acted]["raw"], runtime, config, resources
    )
    node = TreeNode(
        id=len(tree),
        parent=leaf,
        depth=parent["steps"] + 1,
        iteration=state["iteration"],
        action=writes["current"].get("action_text", ""),
        status=writes["status"],
        update=kept_update(writes),
    )
    steps = state.get("steps", 0) + 1
    event = {"step": steps, **writes["trajectory"][0], "status": writes["status"]}
    runtime.stream_writer({**event, "node": node["id"]})  # the live step event, as ReAct's
    return {
        "tree": [node],
        "acted": acted + 1,
        "steps": steps,
        "trajectory": [
            cast(LatsStep, {**writes["trajectory"][0], "node": node["id"], "parent": leaf})
        ],
        "usage": [cast(LatsUsage, {**writes["usage"][0], "node": node["id"], "call": "step"})],
        "audit": [cast(LatsAudit, {**writes["audit"][0], "node": node["id"]})],
    }


def evaluate(state: LatsState, runtime: Runtime[Context], resources: Resources) -> dict[str, Any]:
    """Value the newest child (the value prompt), or judge it when its episode ended."""
    context, _ = episode_context(state, runtime.context)
    settings = search_settings(state)
    node = state["tree"][-1]
    steps = _react_state(state, context, node["id"])["trajectory"]
    model = resources.chat_model(context)
    calls = state.get("model_calls", 0)
    update: dict[str, Any] = _going_on(state)
    try:  # a prompt that cannot fit stops the search; a larger window evaluates the child again
        if is_terminal(node):
            record, made = judge_terminal(
                node, state["question"], steps, settings, context, model, calls
            )
            if record["reward"] == 1.0:
                update["stopped_by"] = "solved"
            kinds: list[CallKind] = ["self_check"] * len(made)
        else:
            record, tokens = value_of(
                state["question"], steps, state.get("reflections") or [], context, model, calls
            )
            made, kinds = [tokens], ["value"]
    except ContextExhaustedError as exc:
        return exhausted(exc)
    return {
        **update,
        "stats": {str(node["id"]): record},
        "usage": [_usage(node["id"], kind, t) for kind, t in zip(kinds, made, strict=True)],
        "model_calls": calls + len(made),
    }


def reflect(state: LatsState, runtime: Runtime[Context], resources: Resources) -> dict[str, Any]:
    """Write a lesson on the newest child, a failed terminal; later prompts show it."""
    context, _ = episode_context(state, runtime.context)
    node = state["tree"][-1]
    record = state["stats"][str(node["id"])]
    steps = _react_state(state, context, node["id"])["trajectory"]
    calls = state.get("model_calls", 0)
    try:  # a prompt that cannot fit stops the search; a larger window reflects again
        lesson, tokens = write_lesson(
            state["question"],
            steps,
            record["judged"],
            context,
            resources.chat_model(context),
            calls,
        )
    except ContextExhaustedError as exc:
        return exhausted(exc)
    return {
        **_going_on(state),
        "stats": {str(node["id"]): {**record, "reflection": lesson}},
        "reflections": [lesson] if lesson else [],
        "usage": [_usage(node["id"], "reflection", tokens)],
        "model_calls": calls + 1,
    }


def backprop(state: LatsState) -> dict[str, Any]:
    """Count the iteration's best child value on the selected leaf and its ancestors."""
    tree, stats = state["tree"], state["stats"]
    reward = iteration_reward(tree, stats, state["iteration"])
    return {"stats": backpropagate(tree, stats, state["selected"], reward)}


def finish(state: LatsState) -> dict[str, Any]:
    """End the search with the best terminal's answer, its branch, its evidence, and the status.

    The answer's citations come from the steps of its own branch (`path`), never another's.
    """
    stopped_by = state.get("stopped_by") or "exhausted"
    if stopped_by == "recursion_limit":
        return {"status": "recursion_limit"}
    tree = state.get("tree") or []
    best = best_terminal(tree, state.get("stats") or {})
    answer = tree[best]["update"].get("answer") if best is not None else None
    path = path_to(tree, best) if best is not None else []
    branch = [step for step in state.get("trajectory") or [] if step.get("node") in path]
    return {
        "answer": answer,
        "status": final_status(answer, stopped_by),
        "path": path,
        **answer_evidence(branch, answer, question=str(state.get("question") or "")),
    }


def _going_on(state: LatsState) -> dict[str, Any]:
    """Return the update that reopens a search stopped out of context (a larger window goes on)."""
    if state.get("status") != "context_exhausted":
        return {}
    return {"status": "running", **reopened(state)}


def _react_state(state: LatsState, context: Context, node: int) -> dict[str, Any]:
    """Return the ReAct state of tree `node`, with the candidates' settings (text protocol)."""
    return react_state(state["tree"], node, state["question"], text_context(context).as_dict())


def _usage(node: int, call: CallKind, tokens: tuple[int, int]) -> LatsUsage:
    return LatsUsage(
        step=node,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        wiki_requests=0,
        node=node,
        call=call,
    )
