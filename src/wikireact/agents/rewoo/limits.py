"""How ReWOO stops before LangGraph's recursion limit: supersteps per part, and the least limit.

A run takes one superstep for its input (`__start__`), then one per node: `plan`,
`schedule`, one superstep for a whole round of `work` (its steps run side by side),
`schedule` again to record it, and `solve`. Each
node that chooses what runs next (`plan`, `schedule`) first checks, with LangGraph's
`RemainingSteps`, that the supersteps it would start fit; if not, the episode stops with
status `recursion_limit` (resumable: a later run, with the same or a larger limit,
continues from the recorded steps: `graph.route_start`) instead of raising
`GraphRecursionError`. The rule is every agent's (`wikireact.episode.recursion.has_room`).
"""

from __future__ import annotations

ROUND_SUPERSTEPS = 2
"""A round of plan steps: `work` (every step of the round at once), then `schedule` records it."""
NEXT_NODE = 1
"""The single node that follows: `schedule` after a plan, `plan` again (a re-plan), or `solve`."""
MIN_RECURSION_LIMIT = 4
"""The smallest `recursion_limit` at which a ReWOO run makes progress.

Every run spends one superstep on its input (LangGraph's `__start__`). A new run then
plans and records its plan; a run that continues an episode starts at `schedule`, runs one
round of workers and records it (`__start__`, `schedule`, `work`, `schedule`: four
supersteps), or solves (`__start__`, `schedule`, `solve`). So at this limit every run
records at least one step, and runs repeated at it finish the episode; below it a
continued run could never record a round. The door (`wikireact.episode.admission`) may
refuse a smaller limit with one line.
"""
UNLIMITED = 1 << 30
"""`remaining_steps` when LangGraph gives none (a node called outside a run)."""
