"""The planner's and replanner's instructions and exemplars, and the question each sub-goal asks.

Planning stays text in both protocols: the plan is a numbered list and the replanner's
answer a `Finish[answer]` line, read by `wikireact.agents.plan_execute.replies`; only the
sub-goals' ReAct episodes use the run's protocol.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from wikireact.agents.plan_execute.state import SubgoalResult
from wikireact.context import MAX_QUESTION_CHARS

PLANNER_INSTRUCTION = """You plan how to answer a question with Wikipedia.
Break the question into the fewest sub-goals (at most {limit}) that each need one or two Wikipedia pages. Each sub-goal is a short task or question that a researcher can carry out alone, naming the entity to look up; later sub-goals may rely on the results of earlier ones.
Reply with the numbered list only, one sub-goal per line: `1. ...`, `2. ...`."""

REPLANNER_INSTRUCTION = """You oversee the answering of a question with Wikipedia, one sub-goal at a time.
You see the question and the results of the sub-goals carried out so far.
If the results answer the question, reply `Finish[answer]` on one line: the answer is a short phrase, or yes/no.
Otherwise reply with a numbered list of the sub-goals that remain (at most {limit}), one per line: `1. ...`, `2. ...`. Do not repeat a sub-goal that already has a result unless it failed."""

FINAL_INSTRUCTION = """You oversee the answering of a question with Wikipedia.
The research budget is spent: no more sub-goals can run. Reply `Finish[answer]` on one line with the best answer the results support: a short phrase, or yes/no."""

PLANNER_EXEMPLARS = """Question: Were Scott Derrickson and Ed Wood of the same nationality?
1. Find Scott Derrickson's nationality.
2. Find Ed Wood's nationality.

Question: The director of the romantic comedy "Big Stone Gap" is based in what New York city?
1. Find the director of the romantic comedy "Big Stone Gap".
2. Find the New York city that director is based in."""

REPLANNER_EXEMPLARS = """Question: Were Scott Derrickson and Ed Wood of the same nationality?
Results:
1. Find Scott Derrickson's nationality. -> American
2. Find Ed Wood's nationality. -> American
Reply: Finish[yes]

Question: The director of the romantic comedy "Big Stone Gap" is based in what New York city?
Results:
1. Find the director of the romantic comedy "Big Stone Gap". -> Adriana Trigiani
Remaining plan:
1. Find the New York city that director is based in.
Reply:
1. Find the New York city Adriana Trigiani is based in."""

NO_RESULT = "no answer"


def planner_messages(question: str, limit: int, error: str | None) -> list[BaseMessage]:
    """Return the planner's prompt; `error` (a malformed first reply's reason) asks again."""
    text = f"Examples:\n{PLANNER_EXEMPLARS}\n\nQuestion: {question}"
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
) -> list[BaseMessage]:
    """Return the replanner's prompt; `limit` 0 (budget spent) asks for a final answer only."""
    lines = [f"Question: {question}", "Results:"]
    lines += [f"{r['number']}. {r['goal']} -> {result_text(r)}" for r in results]
    if remaining and limit:
        lines += ["Remaining plan:", *(f"{i}. {goal}" for i, goal in enumerate(remaining, 1))]
    instruction = REPLANNER_INSTRUCTION.format(limit=limit) if limit else FINAL_INSTRUCTION
    text = f"Examples:\n{REPLANNER_EXEMPLARS}\n\n" + "\n".join(lines) + "\nReply:"
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
