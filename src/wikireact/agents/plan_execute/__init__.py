"""Plan-and-Execute: a planner writes numbered sub-goals, ReAct runs each, a replanner decides.

The graph (`wikireact.agents.plan_execute.graph`) is `plan -> execute -> replan -> execute ...`:
`plan` asks the model for a numbered list of sub-goals; `execute` runs the first one as a
whole ReAct episode, the ReAct graph of `wikireact.graph` called as a subgraph with its own
step budget (its steps stream as subgraph events and show in Studio); `replan` sees the
results so far and answers `Finish[answer]` or a new list of the sub-goals that remain.
"""
