"""ReWOO's instructions and exemplars: the planner's (write the whole plan) and the solver's.

The planner sees the tools, example plans in the paper's form (wikireact's own,
`wikireact/prompting/data/rewoo.json`, or a prompt file's `rewoo_*` key) and the question; the
solver sees the question, the plan with each step's evidence, and must end with
`Finish[answer]`. An LLM step gets its input (evidence substituted) and the question.
The last human message of the planner's and the solver's prompt is `Question: ...`, as
ReAct's is, so per-question scripts find their question.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from wikireact.prompting.exemplars import PlanExemplar, default_plans

PLANNER_INSTRUCTION = """\
For the question below, make a plan that solves it step by step, before any tool runs. \
For each step, say which tool to use and with which input; each step's result is stored \
as evidence #E<n>, which later inputs may cite (it is replaced by that evidence's text).
Tools:
Search[title]: opens the Wikipedia page with this title and returns its first sentences \
(or similar titles, when there is no such page).
Lookup[keyword]: returns the next sentence containing keyword in the page of the nearest \
Search above it.
LLM[instruction]: a language model follows the instruction (for example, extract a fact \
from cited evidence) and returns its answer.
Write every step as two lines:
Plan: <why this step>
#E<n> = <Tool>[<input>]
Use at most {max_steps} steps. Write only the plan."""

REPLAN_NOTE = "Your previous plan could not run: {error} Write a corrected plan."

SOLVER_INSTRUCTION = """\
Solve the question using the plan and the evidence its steps found. The evidence may be \
incomplete or wrong: use it with care. Think briefly, then end with one line \
Finish[answer], the answer as short as possible (yes or no for a yes/no question)."""

LLM_INSTRUCTION = (
    "Follow the instruction using only the text it gives. Answer in one short sentence."
)


def planner_messages(
    question: str,
    max_steps: int,
    error: str | None,
    examples: Sequence[PlanExemplar] | None = None,
) -> list[BaseMessage]:
    """Return the planner's prompt; `error` (a re-plan) says why the previous plan failed.

    `examples`: the example plans (None: wikireact's own).
    """
    shown = "\n".join(f"Question: {e.question}\n{e.plan}" for e in (examples or default_plans()))
    messages: list[BaseMessage] = [
        SystemMessage(PLANNER_INSTRUCTION.format(max_steps=max_steps)),
        HumanMessage(f"Examples:\n{shown}"),
    ]
    if error:
        messages.append(HumanMessage(REPLAN_NOTE.format(error=error)))
    messages.append(HumanMessage(f"Question: {question}"))
    return messages


def solver_messages(question: str, worked: str) -> list[BaseMessage]:
    """Return the solver's prompt: the plan with its evidence (`worked`), then the question."""
    return [
        SystemMessage(SOLVER_INSTRUCTION),
        HumanMessage(worked),
        HumanMessage(f"Question: {question}"),
    ]


def llm_messages(question: str, instruction: str) -> list[BaseMessage]:
    """Return an LLM step's prompt: its input, evidence substituted, beside the question."""
    return [
        SystemMessage(LLM_INSTRUCTION),
        HumanMessage(f"Question: {question}"),
        HumanMessage(instruction),
    ]
