"""Scripted Plan-and-Execute runs over tests/support.py's PAGES, shared by the tests and the worker."""

from __future__ import annotations

from wikireact.models.scripted import ScriptOutput

PLAN = "Plan:\n1. Find Scott Derrickson's nationality.\n2. Find Ed Wood's nationality."
REPLANNED = "1. Find where Ed Wood was born."
"""The replanner's new list after sub-goal 1: it replaces the plan's sub-goal 2."""

WHOLE_RUN: list[ScriptOutput] = [
    PLAN,  # call 0: planner
    "Thought: his page.\nAction: Search[Scott Derrickson]",  # 1: sub-goal 1, step 1
    "Thought: he is American.\nAction: Finish[American]",  # 2: sub-goal 1, step 2
    REPLANNED,  # 3: replanner, a new list
    "Thought: Wood's page.\nAction: Search[Ed Wood]",  # 4: sub-goal 2, step 1
    "Thought: where born?\nAction: Lookup[born]",  # 5: sub-goal 2, step 2
    "Thought: and died?\nAction: Lookup[died]",  # 6: sub-goal 2, step 3
    "Thought: found it.\nAction: Finish[Poughkeepsie, New York]",  # 7: sub-goal 2, step 4
    "Both are American.\nFinish[yes]",  # 8: replanner, the answer
]
"""A whole run as one list in call order: plan, 2 steps, a new list, 4 steps, Finish."""
WHOLE_RUN_ACTIONS = [
    "Search[Scott Derrickson]",
    "Finish[American]",
    "Search[Ed Wood]",
    "Lookup[born]",
    "Lookup[died]",
    "Finish[Poughkeepsie, New York]",
]
FIRST_CALL_OF_SUBGOAL_2 = 4
