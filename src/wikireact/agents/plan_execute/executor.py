"""`execute`: run the plan's next sub-goal as a whole ReAct episode, the ReAct graph as a subgraph.

The ReAct graph (`wikireact.graph.make_builder`) is compiled without a checkpointer, so it
saves its checkpoints with the parent's, in the namespace of this node's task: its steps
stream as subgraph events (`stream(..., subgraphs=True)`), Studio shows its state, an
approval `interrupt()` in its `act` pauses the whole episode (resume the parent with
`Command(resume=...)`), and after a crash the parent's resume re-runs this node, whose
subgraph resumes inside the sub-goal from its last checkpoint (LangGraph passes the
resuming flag down), taking no step twice.

The sub-goal runs with the episode's context, as a HotpotQA question whatever the episode's
task (`SUBGOAL_TASK`), and its own step budget: the smaller of the
sub-goal budget and the steps left in the total budget (`Context.max_steps`). Its model
calls are numbered after the episode's earlier ones (`CALL_OFFSET_KEY`), so one script
spans the whole run. The node writes only the sub-goal's own steps, renumbered in the
episode, never the subgraph's output channels as they are (see `state`).

A sub-goal starts only when replanning after it still fits before the recursion limit
(`SUPERSTEPS_AFTER`); else the episode stops (status `recursion_limit`) and a run with a
larger limit runs it. A sub-goal the recursion limit cut is no result: the episode stops
there, nothing is replanned, and a run with a larger limit continues inside it
(`wikireact.episode.sub_episode`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langgraph.runtime import Runtime

from wikireact.agents.nested_steps import StepForwarder
from wikireact.agents.plan_execute.planning import within_budget
from wikireact.agents.plan_execute.prompts import subgoal_question
from wikireact.agents.plan_execute.state import (
    PlanAuditRecord,
    PlanState,
    PlanStep,
    PlanUsage,
    SubgoalResult,
    read_limits,
)
from wikireact.context import Context
from wikireact.episode.budgets import tokens_used
from wikireact.episode.compiled import EpisodeGraph
from wikireact.episode.recursion import has_room
from wikireact.episode.stored_context import episode_context
from wikireact.episode.sub_episode import COMPLETED, cut_update, sub_episode_config, was_cut
from wikireact.models.call_metadata import CALL_OFFSET_KEY, TOKENS_OFFSET_KEY

Executor = Callable[[PlanState, Runtime[Context]], dict[str, Any]]
SUBGOAL_TASK = {"task": "hotpotqa"}
"""A sub-goal is a free question, whatever the episode's task: under FEVER only the
replanner's Finish is a verdict (a label), never a sub-goal's answer."""
SUPERSTEPS_AFTER = 3
"""Supersteps after `execute` before the run can end: replan, its retry, the next `execute`
(which stops the run when the one after it would not fit)."""


def make_executor(react: EpisodeGraph) -> Executor:
    """Return the `execute` node running sub-goals on the compiled ReAct graph `react`.

    The node's code names `react`, which is how LangGraph finds the subgraph (drawing with
    `xray`, `get_state(subgraphs=True)`, Studio).
    """

    def execute(state: PlanState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run the next sub-goal to its end and record its steps and result."""
        context, kept = episode_context(state, runtime.context)
        remaining = state.get("plan") or []
        if not remaining:  # unreachable through the routers; kept total for manual updates
            return kept
        if not has_room(state.get("remaining_steps", SUPERSTEPS_AFTER + 1), SUPERSTEPS_AFTER):
            return {**kept, "status": "recursion_limit"}  # a larger limit runs this sub-goal
        results = state.get("subgoals") or []
        steps, calls = state.get("steps", 0), state.get("model_calls", 0)
        budget = min(read_limits(state).subgoal_steps, context.max_steps - steps)
        question = subgoal_question(state["question"], remaining[0], results, context.task)
        number = len(results) + 1
        forwarder = StepForwarder(runtime.stream_writer, steps, subgoal=number)
        used = tokens_used(state.get("usage") or [])  # the sub-goal's budgets count them too
        episode = react.invoke(
            {"question": question},
            sub_episode_config(state, {CALL_OFFSET_KEY: calls, TOKENS_OFFSET_KEY: used}, forwarder),
            context=Context.read(
                {**context.as_dict(), **SUBGOAL_TASK, "max_steps": max(budget, 1)}
            ),
        )
        if was_cut(episode):  # the recursion limit or the window stopped it: not its result
            return {**kept, **cut_update(state, episode)}
        update = {
            **kept,
            **COMPLETED,
            **episode_update(episode, number, steps),
            "steps": steps + episode["steps"],
            "model_calls": calls + len(episode["usage"]),
            "plan": list(remaining[1:]),
            "subgoals": [
                SubgoalResult(
                    number=number,
                    goal=remaining[0],
                    question=question,
                    status=episode["status"],
                    answer=episode["answer"],
                    steps=episode["steps"],
                    budget=max(budget, 1),
                    last_observation=next(
                        (
                            s["observation"]
                            for s in reversed(episode["trajectory"])
                            if s["observation"]
                        ),
                        "",
                    ),
                )
            ],
        }
        return within_budget(update, state, context)  # calls and tokens, sub-goals' included

    return execute


def episode_update(episode: dict[str, Any], number: int, steps_before: int) -> dict[str, Any]:
    """Return a sub-goal episode's steps, usage and audit, numbered in the whole episode."""
    return {
        "trajectory": [cast(PlanStep, {**s, "subgoal": number}) for s in episode["trajectory"]],
        "usage": [
            cast(
                PlanUsage,
                {**u, "step": steps_before + u["step"], "call": "step", "subgoal": number},
            )
            for u in episode["usage"]
        ],
        "audit": [
            cast(PlanAuditRecord, {**a, "step": steps_before + a["step"], "subgoal": number})
            for a in episode["audit"]
        ],
    }
