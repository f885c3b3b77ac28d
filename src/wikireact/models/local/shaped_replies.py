"""A small local model's ReWOO replies: a plan in the question's shape, answers copied from pages.

With the small-model guard rails on (`LlamaCppChatModel.extractive_answers`), three of
ReWOO's calls decode under grammars read from their own prompt, not only from the form:
- the plan (`rewoo_plan`) takes the question's shape (`wikireact.models.local.plan_shape`,
  `reply_grammars.shaped_plan`), its Searches naming titles the question names (over a
  snapshot: titles it holds);
- an LLM step (`extract`) copies a run of words out of the page text its input fences
  (`wikireact.models.local.answer_spans`), not one of the question's titles: its answer is
  what a later `Search[#E<k>]` opens, so a name is copied whole and alone ("Prague", not
  "The capital and largest city is Prague");
- the solver (`final_answer` after a worked plan) copies its answer out of the Search and
  Lookup evidence, of the question's type, not starting like a title the plan searched
  (nor an LLM step's answer: the bridge entity), a choice the question offers aside.
Anything else, or a prompt with no page text to copy, gets the form's own grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from wikireact.models.local.answer_spans import answer_rules, answer_type, offered_choices
from wikireact.models.local.page_text import page_text
from wikireact.models.local.plan_shape import question_plan, question_titles
from wikireact.models.local.reply_grammars import reply_grammar, shaped_plan
from wikireact.models.local.step_form import Turn, question, title_starts
from wikireact.models.reply_form import ReplyForm

_FENCED = re.compile(r"«([^«»]*)»")
_WORKED_STEP = re.compile(
    r"^#E(\d+) = (Search|Lookup|LLM)\[(.*)\]\nEvidence: «([^«»\n]*)»$", re.MULTILINE
)
"""A step of the solver's worked plan with its evidence (`wikireact.agents.rewoo.solver`)."""
_REFERENCE = re.compile(r"#E(\d+)")


def local_reply_grammar(
    form: ReplyForm, turns: list[Turn], snapshot: str | None, guard_rails: bool
) -> str:
    """Return the grammar of a reply of `form` to `turns` (`snapshot`: the titles' file)."""
    shaped = None
    if guard_rails and form.kind == "rewoo_plan":
        plan = question_plan(question(turns), _title_test(snapshot))
        shaped = shaped_plan(plan, form.limit) if plan is not None else None
    elif guard_rails and form.kind == "extract":
        shaped = _extract(turns, snapshot)
    elif guard_rails and form.kind == "final_answer" and not form.labels:
        shaped = _solver_answer(turns)
    return shaped or reply_grammar(form)


def _title_test(snapshot: str | None) -> Callable[[str], bool] | None:
    """Return whether a text is a title of the snapshot file (None: no snapshot)."""
    if not snapshot:
        return None
    from wikireact.wiki.title_index import title_index

    index = title_index(Path(snapshot))
    return lambda text: text.encode() in index


def _extract(turns: list[Turn], snapshot: str | None) -> str | None:
    """Return an LLM step's grammar: a run of its fenced page text (None: it fences none)."""
    if not turns:
        return None
    instruction = turns[-1]["content"]
    pages = tuple(t for f in _FENCED.findall(instruction) if (t := page_text(f)))
    asked = _FENCED.sub(" ", instruction)
    kind = answer_type(asked)
    named = question_titles(question(turns), _title_test(snapshot))
    rules = answer_rules(
        pages,
        title_starts(named),
        question=asked,
        kind="name" if kind == "any" else kind,
        names_only=kind in ("any", "name"),
    )
    return None if rules is None else f"root ::= answer\n{rules}"


def _solver_answer(turns: list[Turn]) -> str | None:
    """Return the solver's grammar: a Finish copying page evidence (None: no worked plan)."""
    worked = "\n".join(t["content"] for t in turns if t["role"] == "user")
    steps = _WORKED_STEP.findall(worked)
    if not steps:
        return None
    evidence = {number: text for number, _, _, text in steps}
    pages = tuple(t for _, tool, _, text in steps if tool != "LLM" and (t := page_text(text)))
    found = [text for _, tool, _, text in steps if tool == "LLM"]
    searched = [
        _REFERENCE.sub(lambda m: evidence.get(m.group(1), m.group(0)), argument)
        for _, tool, argument, _ in steps
        if tool == "Search"
    ]
    asked = question(turns)
    choices = [c.casefold() for c in offered_choices(asked)]
    blocked = [t for t in (*searched, *found) if not any(t.casefold() in c for c in choices)]
    rules = answer_rules(pages, title_starts(blocked), question=asked)
    return None if rules is None else f'root ::= "Finish[" answer "]"\n{rules}'
