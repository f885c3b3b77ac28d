"""A small local model's Plan-and-Execute replies: one sub-goal a hop, answers it found.

Under its sub-goal grammar alone, Gemma 3 270M filled every plan to the budget ("1. Find who
painted the Mona Lisa. 2.-4. Find when that painting was painted."), ran the repeats, and
finished with the placeholder of the instruction: `Finish[answer]`, on every question. With the
small-model guard rails on (`LlamaCppChatModel.extractive_answers`):
- the plan (`subgoals`) lists one sub-goal a hop of the question's shape
  (`wikireact.models.local.plan_shape`): for a bridge ("the capital of X") the model's own
  sub-goal for the entity, then the question itself (its ReAct episode is shown the entity
  found); for anything else (a comparison's ReAct episode opens both pages, a question naming
  no title is taken as one hop) one sub-goal of its own;
- the replanner (`replan`, and `final_answer` when the budget is spent) makes a bridge's
  remaining sub-goal the question with the entity found named ("On which river does Prague
  stand?": given the whole question, the sub-goal's ReAct searched the Czech Republic again;
  left free, Gemma rewrote it into "Find the capital of X. -> «Prague»"), and then its
  `Finish` copies the answer the latest sub-goal found (fenced «...» in its prompt), never a
  word of the instruction.
A prompt with no sub-goal answer yet gets the form's own grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from wikireact.models.local.answer_spans import gbnf_literal
from wikireact.models.local.plan_shape import hop_question, question_plan
from wikireact.models.local.reply_grammars import reply_grammar
from wikireact.models.local.step_form import Turn
from wikireact.models.reply_form import ReplyForm

SHAPE_SUBGOALS = {"single": 1, "comparison": 1, "bridge": 2}
"""Sub-goals a plan of each question shape lists."""
_RESULT = re.compile(r"^\d+\. .* -> «([^«»\n]*)»$", re.MULTILINE)
"""A sub-goal's line in the replanner's results, with the answer it found."""
_ANY_RESULT = re.compile(r"^\d+\. .* -> ", re.MULTILINE)


def shaped_subgoals(
    form: ReplyForm, turns: list[Turn], is_title: Callable[[str], bool] | None
) -> str | None:
    """Return the grammar of a Plan-and-Execute reply of `form` to `turns` (None: none shaped)."""
    asked, results = _asked(turns)
    if not asked:
        return None
    plan = question_plan(asked, is_title)
    wanted = SHAPE_SUBGOALS[plan.shape] if plan is not None else 1
    if form.kind == "subgoals":
        listed = reply_grammar(replace(form, limit=1))
        if wanted == 1 or form.limit < 2:
            return listed
        then = gbnf_literal(f"2. {asked}\n")  # the question itself, once the entity is found
        return listed.replace("root ::= item1", f"root ::= item1 {then}", 1)
    done = len(_ANY_RESULT.findall(results))
    found = [a.strip() for a in _RESULT.findall(results) if a.strip()]
    if form.kind == "replan" and done < wanted and form.limit >= 1 and plan is not None:
        hop = hop_question(asked, plan, found[-1]) if found else asked  # the question's own hop
        return "root ::= " + gbnf_literal("1. " + hop + "\n") + "\n"
    if not found:
        return None
    return f'root ::= "Finish[" {gbnf_literal(found[-1])} "]"\n'


def _asked(turns: list[Turn]) -> tuple[str, str]:
    """Return the question of the last user turn and the text after it (its results, if any)."""
    users = [t["content"] for t in turns if t["role"] == "user"]
    if not users:
        return "", ""
    _, label, rest = users[-1].rpartition("Question:")
    if not label:
        return "", ""
    line, _, after = rest.strip().partition("\n")
    return line.strip(), after
