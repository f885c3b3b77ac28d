"""Reading planner and replanner replies: a numbered list of sub-goals, or `Finish[answer]`.

Tolerant of form: items numbered `1.`, `1)`, `1:`, `Step 1:` or `Sub-goal 1 -`, in bold or
not, with any text (a `Plan:` header, reasoning) around them; the numbering may start
anywhere (a replanner may go on counting) but must go up by one. `Finish[answer]` is read
by the ReAct text protocol's parser (`wikireact.protocols.text`), on an `Action:` line or
alone; under FEVER its argument must be one of the three labels (`wikireact.protocols.labels`).
Anything else is malformed: the reply is an `invalid` outcome, with the reason.
Lines are scanned one at a time (no pattern spans lines), so hostile text parses in
linear time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wikireact.context import Task
from wikireact.protocols.labels import label_error, normalize_label
from wikireact.protocols.text import Action, cut_at_observation, parse_output

MAX_ITEMS = 20
"""More numbered lines than this is not a plan."""
MAX_SUBGOAL_CHARS = 300
"""A sub-goal becomes a ReAct question: one short task, not an essay."""
FORM_HINT = (
    "Write the sub-goals as a numbered list, one per line (`1. ...`, `2. ...`), "
    "or reply `Finish[answer]` when the results so far answer the question."
)
PLAN_FORM_HINT = "Write the sub-goals as a numbered list, one per line (`1. ...`, `2. ...`)."
_ITEM = re.compile(
    r"(?:[*_#>]+ ?)?(?:(?:step|sub-?goal|goal|task)\s?)?(\d{1,3})[*_]*\s?[.):\-–]\s*(.*)",
    re.IGNORECASE,
)
_MARKS = "*_` "


@dataclass(frozen=True)
class Reply:
    """A planner/replanner reply as read: sub-goals, or an answer, or why it is malformed."""

    subgoals: tuple[str, ...] = ()
    finish: str | None = None
    error: str | None = None


def read_reply(text: str, *, finish_allowed: bool, task: Task = "hotpotqa") -> Reply:
    """Read a reply; `finish_allowed` is False for the first plan (it must list sub-goals).

    Under `task="fever"` a Finish is the claim's verdict: one of the three labels (any form
    `normalize_label` reads, kept as the label), else the reply is malformed.
    """
    text = cut_at_observation(text if isinstance(text, str) else str(text))
    items = _numbered_items(text)
    action = parse_output(text).result
    finish = action.argument if isinstance(action, Action) and action.name == "Finish" else None
    hint = FORM_HINT if finish_allowed else PLAN_FORM_HINT
    if isinstance(items, str):
        return Reply(error=f"{items} {hint}")
    if finish is not None:
        if not finish_allowed:
            return Reply(error=f"the first reply must be a plan, not an answer. {hint}")
        if items:
            return Reply(error=f"give either Finish[answer] or a numbered list, not both. {hint}")
        if task == "fever":
            label = normalize_label(finish)
            return Reply(finish=label) if label is not None else Reply(error=label_error(finish))
        return Reply(finish=finish)
    if isinstance(action, Action):
        return Reply(error=f"the planner does not act ({action} is for the sub-goals). {hint}")
    if not items:
        return Reply(error=f"no numbered sub-goal found. {hint}")
    return Reply(subgoals=tuple(items))


def _numbered_items(text: str) -> list[str] | str:
    """Return the numbered items of `text` in order, or why the numbering is malformed."""
    items: list[str] = []
    last: int | None = None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        match = _ITEM.fullmatch(line.strip())
        if not match:
            continue
        number, goal = int(match.group(1)), match.group(2).strip(_MARKS).strip()
        if last is not None and number != last + 1:
            return f"the sub-goals are numbered {last} then {number}; number them in order."
        if not goal:
            return f"sub-goal {number} is empty."
        if len(goal) > MAX_SUBGOAL_CHARS:
            return f"sub-goal {number} is longer than {MAX_SUBGOAL_CHARS} characters."
        items.append(" ".join(goal.split()))
        last = number
        if len(items) > MAX_ITEMS:
            return f"more than {MAX_ITEMS} sub-goals."
    return items
