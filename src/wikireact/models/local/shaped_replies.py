"""A small local model's ReWOO replies: a plan in the question's shape, answers copied from pages.

With the small-model guard rails on (`LlamaCppChatModel.extractive_answers`), three of
ReWOO's calls decode under grammars read from their own prompt, not only from the form:
- the plan (`rewoo_plan`) takes the question's shape (`wikireact.models.local.plan_shape`,
  `reply_grammars.shaped_plan`), its Searches naming titles the question names (over a
  snapshot: titles it holds);
- an LLM step (`extract`) copies a run of words out of the page text its input fences
  (`wikireact.models.local.answer_spans`), not one of the question's titles: its answer is
  what a later `Search[#E<k>]` opens (a small model's plan has an LLM step only to find a
  bridge's entity), so a name is copied whole and alone ("Prague", not "The capital and
  largest city is Prague"), even when the instruction asks "when" or "how many";
- the solver (`final_answer` after a worked plan) copies its answer out of the Search and
  Lookup evidence (after a bridge's LLM step: the page it led to), of the question's type,
  not starting like a title the plan searched (nor an LLM step's answer: the bridge
  entity), a choice the question offers aside.
Both copy from the clauses that share the most words with what is asked (the question's
relation, "the capital of X": capital; the instruction's and the question's own words), as a
Lookup would find them: Gemma 3 270M, offered every name of a page, took the first one
("Austria" for the capital of the Czech Republic). Anything else, or a prompt with no page
text to copy, gets the form's own grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from wikireact.models.local.answer_spans import answer_rules, answer_type, offered_choices
from wikireact.models.local.page_text import page_text
from wikireact.models.local.plan_shape import question_plan, question_titles, relation_words
from wikireact.models.local.reply_grammars import reply_grammar, shaped_plan
from wikireact.models.local.shaped_subgoals import shaped_subgoals
from wikireact.models.local.step_form import Turn, question, title_starts
from wikireact.models.reply_form import ReplyForm

_FENCED = re.compile(r"«([^«»]*)»")
_WORKED_STEP = re.compile(
    r"^#E(\d+) = (Search|Lookup|LLM)\[(.*)\]\nEvidence: «([^«»\n]*)»$", re.MULTILINE
)
"""A step of the solver's worked plan with its evidence (`wikireact.agents.rewoo.solver`)."""
_REFERENCE = re.compile(r"#E(\d+)")
_CLAUSE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])|;\s*|,\s+(?=[^\d\s])")
"""Where a sentence or a clause ends (a comma before a number, as in a date, does not)."""
_WORDS = re.compile(r"[a-z]+")
_STOP = frozenset(
    "the a an of in on at to by for from with and or is are was were be been do does did what "
    "which who whom whose when where how many much about according name find its his her their "
    "this that it as into".split()
)
STEM = 5
"""Words compare by their first this-many letters (painter, painting; river, rivers)."""


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
        shaped = _solver_answer(turns) or shaped_subgoals(form, turns, _title_test(snapshot))
    elif guard_rails and form.kind in ("subgoals", "replan") and not form.labels:
        shaped = shaped_subgoals(form, turns, _title_test(snapshot))
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
    named = question_titles(question(turns), _title_test(snapshot))
    near = focused(pages, {*relation_words(question(turns)), *_stems(asked)}, named)
    for source in dict.fromkeys((near, pages)):  # the focus first, else the whole text
        rules = answer_rules(source, title_starts(named), kind="name", names_only=True)
        if rules is not None:
            return f"root ::= answer\n{rules}"
    return None


def _solver_answer(turns: list[Turn]) -> str | None:
    """Return the solver's grammar: a Finish copying page evidence (None: no worked plan)."""
    worked = "\n".join(t["content"] for t in turns if t["role"] == "user")
    steps = _WORKED_STEP.findall(worked)
    if not steps:
        return None
    evidence = {number: text for number, _, _, text in steps}
    hops = [i for i, (_, tool, _, _) in enumerate(steps) if tool == "LLM"]
    last_hop = steps[hops[-1] + 1 :] if hops and hops[-1] + 1 < len(steps) else steps
    pages = tuple(t for _, tool, _, text in last_hop if tool != "LLM" and (t := page_text(text)))
    if not pages:  # the hop's Search missed: what the first pages say
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
    near = pages
    if not choices:  # (a choice is named in the question: every page holds it)
        hop = relation_words(asked)  # the entity the plan found: not what the answer is about
        near = focused(pages, _stems(asked) - hop, (*searched, *found))
    names = answer_type(asked) == "name"
    for source in dict.fromkeys((near, pages)):  # the focus first, else the whole pages
        rules = answer_rules(source, title_starts(blocked), question=asked, names_only=names)
        if rules is not None:
            return f'root ::= "Finish[" answer "]"\n{rules}'
    return None


def focused(pages: tuple[str, ...], asked: set[str], titles: tuple[str, ...]) -> tuple[str, ...]:
    """Return the clauses of `pages` sharing the most of the `asked` stems (all: none shares one).

    The words of `titles` (pages searched, entities found) count for nothing: every sentence
    of their pages names them.
    """
    wanted = asked - {w for title in titles for w in _stems(title)}
    sentences = [s for page in pages for s in _CLAUSE_END.split(page) if s.strip()]
    scores = [len(_stems(s) & wanted) for s in sentences]
    best = max(scores, default=0)
    if best == 0:
        return pages
    return tuple(s for s, score in zip(sentences, scores, strict=True) if score == best)


def _stems(text: str) -> set[str]:
    """Return the stems of `text`'s words (lower case, stop words aside)."""
    return {w[:STEM] for w in _WORDS.findall(text.lower()) if w not in _STOP and len(w) > 2}
