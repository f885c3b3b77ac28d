"""ReWOO's instructions and exemplars: the planner's (write the whole plan) and the solver's.

The planner sees the tools, one worked example in the paper's form and the question; the
solver sees the question, the plan with each step's evidence, and must end with
`Finish[answer]`. An LLM step gets its input (evidence substituted) and the question.
The last human message of the planner's and the solver's prompt is `Question: ...`, as
ReAct's is, so per-question scripts find their question.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

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

PLANNER_EXAMPLE = """\
Question: Which magazine was started first, Arthur's Magazine or First for Women?
Plan: Find out when Arthur's Magazine was started.
#E1 = Search[Arthur's Magazine]
Plan: Find out when First for Women was started.
#E2 = Search[First for Women]
Plan: Compare the two dates.
#E3 = LLM[Which was started first, given: #E1 and #E2]"""

REPLAN_NOTE = "Your previous plan could not run: {error} Write a corrected plan."

SOLVER_INSTRUCTION = """\
Solve the question using the plan and the evidence its steps found. The evidence may be \
incomplete or wrong: use it with care. Think briefly, then end with one line \
Finish[answer], the answer as short as possible (yes or no for a yes/no question)."""

LLM_INSTRUCTION = (
    "Follow the instruction using only the text it gives. Answer in one short sentence."
)


def planner_messages(question: str, max_steps: int, error: str | None) -> list[BaseMessage]:
    """Return the planner's prompt; `error` (a re-plan) says why the previous plan failed."""
    messages: list[BaseMessage] = [
        SystemMessage(PLANNER_INSTRUCTION.format(max_steps=max_steps)),
        HumanMessage(f"Example:\n{PLANNER_EXAMPLE}"),
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
