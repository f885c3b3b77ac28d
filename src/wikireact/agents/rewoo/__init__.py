"""ReWOO (Xu et al. 2023, arXiv:2305.18323): plan every tool call up front, run them, then answer.

`graph.py` builds it: the planner writes the whole plan in one model call, workers run
its Search/Lookup steps without the model (independent steps at the same time, by
LangGraph fan-out), and the solver answers from the plan and the evidence in one more
call: 2 model calls per question when the plan has no LLM step, where ReAct makes one per
step. It runs over ReAct's environment, approval gate, audit trail, repetition rule and
accounting (`wikireact.wiki`, `wikireact.episode`).

Protocol: ReWOO's plan, LLM steps and answer are text: a plan is a program of many tool
calls with evidence references, which one native tool call cannot state, and the solver's
`Finish[answer]` is read by the same tolerant parser as ReAct's. A run with
`protocol="tools"` is refused in one line, everywhere (`settings`).

Recursion limits: ReWOO stops with status `recursion_limit` before LangGraph's limit and
a later run goes on (`limits`); `MIN_RECURSION_LIMIT` is the smallest limit at which a run
makes progress.
"""

from wikireact.agents.rewoo.limits import MIN_RECURSION_LIMIT as MIN_RECURSION_LIMIT
