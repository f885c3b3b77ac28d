"""The planner's and replanner's instructions and exemplars, and the question each sub-goal asks.

The exemplars are texts of a prompt file (`wikireact.prompting.exemplars`): keys
`planexecute_plan_simple3` (questions, each followed by its numbered sub-goals) and
`planexecute_replan_simple3` (questions with results so far, each followed by `Reply:` and
the replanner's answer). wikireact ships its own, written for this project (none of
its questions is in HotpotQA's dev set); `load_plan_exemplars(FILE)` reads another file's.

Planning stays text in both protocols: the plan is a numbered list and the replanner's
answer a `Finish[answer]` line, read by `wikireact.agents.plan_execute.replies`; only the
sub-goals' ReAct episodes use the run's protocol.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from wikireact.agents.plan_execute.replies import read_reply
from wikireact.agents.plan_execute.state import SubgoalResult
from wikireact.context import MAX_QUESTION_CHARS
from wikireact.errors import PromptFileError
from wikireact.prompting.exemplars import DEFAULT_PROMPTS, read_prompt_file

PLAN_KEY = "planexecute_plan_simple3"
REPLAN_KEY = "planexecute_replan_simple3"

PLANNER_INSTRUCTION = """You plan how to answer a question with Wikipedia.
Break the question into the fewest sub-goals (at most {limit}) that each need one or two Wikipedia pages. Each sub-goal is a short task or question that a researcher can carry out alone, naming the entity to look up; later sub-goals may rely on the results of earlier ones.
Reply with the numbered list only, one sub-goal per line: `1. ...`, `2. ...`."""

REPLANNER_INSTRUCTION = """You oversee the answering of a question with Wikipedia, one sub-goal at a time.
You see the question and the results of the sub-goals carried out so far.
If the results answer the question, reply `Finish[answer]` on one line: the answer is a short phrase, or yes/no.
Otherwise reply with a numbered list of the sub-goals that remain (at most {limit}), one per line: `1. ...`, `2. ...`. Do not repeat a sub-goal that already has a result unless it failed."""

FINAL_INSTRUCTION = """You oversee the answering of a question with Wikipedia.
The research budget is spent: no more sub-goals can run. Reply `Finish[answer]` on one line with the best answer the results support: a short phrase, or yes/no."""

NO_RESULT = "no answer"


@dataclass(frozen=True)
class PlanExemplars:
    """The planner's and the replanner's few-shot examples, as texts of a prompt file."""

    plan: str
    replan: str


def load_plan_exemplars(path: Path | None = None) -> PlanExemplars:
    """Read the exemplars from a prompt file (default: wikireact's own).

    Raises `PromptFileError` (one line) when a key is missing or its text holds no usable
    example: a `Question:` line followed by numbered sub-goals; a replan example ends
    with a `Reply:`.
    """
    file = path or DEFAULT_PROMPTS
    data, _digest = read_prompt_file(file)
    for key in (PLAN_KEY, REPLAN_KEY):
        if key not in data:
            raise PromptFileError(f"prompt file {file} has no {key!r} key for plan-execute")
    plan, replan = data[PLAN_KEY], data[REPLAN_KEY]
    if not any(read_reply(block, finish_allowed=False).subgoals for block in _examples(plan)):
        raise PromptFileError(f"prompt file {file}: key {PLAN_KEY!r} holds no usable plan")
    if not any("Reply:" in block for block in _examples(replan)):
        raise PromptFileError(f"prompt file {file}: key {REPLAN_KEY!r} holds no usable reply")
    return PlanExemplars(plan=plan, replan=replan)


@functools.cache
def default_plan_exemplars() -> PlanExemplars:
    """Return wikireact's own planner and replanner exemplars (read once per process)."""
    return load_plan_exemplars()


def _examples(text: str) -> list[str]:
    """Split a prompt text into its examples, each starting at a `Question:` line."""
    blocks: list[list[str]] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("Question:"):
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
    return ["\n".join(block[1:]) for block in blocks]


def planner_messages(
    question: str, limit: int, error: str | None, exemplars: PlanExemplars
) -> list[BaseMessage]:
    """Return the planner's prompt; `error` (a malformed first reply's reason) asks again."""
    text = f"Examples:\n{exemplars.plan}\n\nQuestion: {question}"
    return [
        SystemMessage(PLANNER_INSTRUCTION.format(limit=limit)),
        HumanMessage(_with_retry(text, error)),
    ]


def replanner_messages(
    question: str,
    results: Sequence[SubgoalResult],
    remaining: Sequence[str],
    limit: int,
    error: str | None,
    exemplars: PlanExemplars,
) -> list[BaseMessage]:
    """Return the replanner's prompt; `limit` 0 (budget spent) asks for a final answer only."""
    lines = [f"Question: {question}", "Results:"]
    lines += [f"{r['number']}. {r['goal']} -> {result_text(r)}" for r in results]
    if remaining and limit:
        lines += ["Remaining plan:", *(f"{i}. {goal}" for i, goal in enumerate(remaining, 1))]
    instruction = REPLANNER_INSTRUCTION.format(limit=limit) if limit else FINAL_INSTRUCTION
    text = f"Examples:\n{exemplars.replan}\n\n" + "\n".join(lines) + "\nReply:"
    return [SystemMessage(instruction), HumanMessage(_with_retry(text, error))]


def result_text(result: SubgoalResult) -> str:
    """Return what a sub-goal found: its answer, or why it has none and its last observation."""
    if result["answer"] is not None:
        return result["answer"]
    seen = f"; last observation: {result['last_observation']}" if result["last_observation"] else ""
    return f"{NO_RESULT} ({result['status']}){seen}"


def subgoal_question(question: str, goal: str, results: Sequence[SubgoalResult]) -> str:
    """Return the question a sub-goal's ReAct episode answers: the goal, in its context.

    The context (the whole question, the answers found so far) is cut so the text stays
    within `MAX_QUESTION_CHARS`; the goal itself is never cut.
    """
    found = "; ".join(f"{r['goal']} -> {result_text(r)}" for r in results if r["answer"])
    context = f"part of answering: {question}" + (f"; found so far: {found}" if found else "")
    room = MAX_QUESTION_CHARS - len(goal) - len(" ()")
    if len(context) > room:
        context = context[: max(room - 1, 0)] + "…"
    return f"{goal} ({context})" if room > 1 else goal


def _with_retry(text: str, error: str | None) -> str:
    if error is None:
        return text
    return f"{text}\n\nYour previous reply could not be read: {error}\nReply again in that form."
