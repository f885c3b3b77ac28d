"""LATS (Zhou et al. 2023, arXiv:2310.04406): Monte Carlo tree search over ReAct steps.

One iteration of the graph (`graph.py`): `select` a leaf by UCT (`uct.py`); `expand` it
with n candidate next steps (`expansion.py`); `act` runs each candidate's action through
ReAct's own parse, approval gate, environment, observation fence, repetition rule and
audit (`candidate.py`), one child per superstep; `evaluate` gives each child a value (a
1-10 score from the model, `values.py`) or, for a terminal child, the evaluator's reward
(gold exact match in evaluation, else Finish and the optional self-check); `reflect` writes
a lesson on a failed terminal, shown to later expansion and value prompts; `backprop`
updates visits and values up to the root (`backprop.py`). The search stops at the first
terminal with reward 1 or at a budget, and `finish` answers (`answer.py`).

The tree lives in the graph's own channels (`state.py`): each tree node keeps its ReAct
step and the environment it leaves (page, cursors, proposals), so every checkpoint of the
thread holds the whole search. `MIN_RECURSION_LIMIT` is the smallest `recursion_limit` that
leaves room for one iteration at the default number of candidates.
"""

from wikireact.agents.lats.settings import MIN_RECURSION_LIMIT

__all__ = ["MIN_RECURSION_LIMIT"]
