"""GBNF grammars for the replies agents expect besides a ReAct step: plans, lessons, values.

A local model asked for a `ReplyForm` (`wikireact.models.reply_form`) decodes under the
grammar of its kind, so that the agent's own reader accepts whatever it writes:
- `rewoo_plan`: `Plan: <why>` then `#E<k> = Tool[input]`, for k = 1, 2, ... (at most
  `limit` steps, and `MAX_PLAN_STEPS`); the first step is a Search, and an input cites only earlier steps, so
  `wikireact.agents.rewoo.plan.read_plan` finds no unknown reference and no cycle;
- `subgoals`: `1. <goal>`, `2. <goal>`, ... (at most `limit`), as
  `wikireact.agents.plan_execute.replies.read_reply` reads a plan;
- `replan`: that list or one `Finish[answer]` line; `final_answer`: the Finish only (with
  `labels`, FEVER's, the answer is one of them);
- `reflection`: one or two sentences opening with `REFLECTION_OPENING` (a small model
  otherwise copies the instruction back as its lesson);
- `value`: `Value: N`, N from 1 to 10 (`wikireact.agents.lats.values.read_value`);
- `extract`: one line of at most `MAX_SENTENCE_CHARS` (a small model copies it from the
  text instead: `wikireact.models.local.shaped_replies`).
No text inside a reply holds a bracket, a control character or a line break, so nothing
in it reads as a second action, and every line starts with its own fixed label; a text
the reader strips starts with a character Python does not count as a space (`word`; its
Latin-1 part is a class of its own: llama.cpp refuses every two-byte character of a negated
class that names one of them).
"""

from __future__ import annotations

from wikireact.models.local.answer_spans import gbnf_literal
from wikireact.models.local.plan_shape import QuestionPlan
from wikireact.models.reply_form import ReplyForm

MAX_PLAN_STEPS = 4
"""A local model's ReWOO plan has at most this many steps (and at most the budget's): Gemma 3
270M, let write seven, repeated its first step until the seventh."""
MAX_PLAN_CHARS = 100
"""A `Plan:` line's reasoning, at most."""
MAX_INPUT_CHARS = 80
"""A plan step's input, at most."""
MAX_GOAL_CHARS = 150
"""A sub-goal, at most (it becomes a ReAct question)."""
MAX_ANSWER_CHARS = 60
MAX_SENTENCE_CHARS = 150
REFLECTION_OPENING = "The attempt failed because "
SECOND_SENTENCE_OPENING = " Next time, "
_TOKENS_PER_ITEM = 70
"""Tokens a plan step or sub-goal may take (Gemma writes about four characters a token)."""

_COMMON = r"""
plain ::= [^\x00-\x1f\x7f\[\]#]
word ::= [^\x00-\x20\x7f-\xff\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\[\]#] | [\xa1-\xff]
answer ::= [A-Za-z0-9] [^\x00-\x1f\x7f\[\]]{0,MAX_ANSWER}
""".replace("MAX_ANSWER", str(MAX_ANSWER_CHARS - 1))


def reply_grammar(form: ReplyForm) -> str:
    """Return the GBNF text (root rule `root`) of the replies `form` allows."""
    if form.kind == "rewoo_plan":
        return _rewoo_plan(min(max(form.limit, 1), MAX_PLAN_STEPS))
    if form.kind == "reflection":
        sentence = (
            f"[^\\x00-\\x1f\\x7f\\[\\].!?] [^\\x00-\\x1f\\x7f\\[\\].!?]{{4,{MAX_SENTENCE_CHARS}}}"
        )
        return (
            f'root ::= {gbnf_literal(REFLECTION_OPENING)} sentence "." '
            f'({gbnf_literal(SECOND_SENTENCE_OPENING)} sentence ".")?\nsentence ::= {sentence}\n'
        )
    if form.kind == "value":
        return 'root ::= "Value: " ([1-9] | "10")\n'
    if form.kind == "extract":
        return f"root ::= [A-Za-z0-9] plain{{0,{MAX_SENTENCE_CHARS - 1}}}\n{_COMMON}"
    finish = " | ".join(gbnf_literal(label) for label in form.labels) or "answer"
    rules = [f'finish ::= "Finish[" ({finish}) "]"', _COMMON]
    if form.kind == "final_answer" or (form.kind == "replan" and form.limit < 1):
        return "\n".join(["root ::= finish", *rules])
    root = "root ::= item1" if form.kind == "subgoals" else "root ::= finish | item1"
    goal = f"goal ::= [A-Za-z0-9] plain{{0,{MAX_GOAL_CHARS - 1}}}"
    limit = max(form.limit, 1)
    items = [_item(k, f'"{k}. " goal "\\n"', k < limit) for k in range(1, limit + 1)]
    return "\n".join([root, *items, goal, *rules])


def reply_budget(form: ReplyForm) -> int:
    """Return the tokens a reply of `form` may take: room for its longest list."""
    if form.kind == "value":
        return 8
    if form.kind in ("reflection", "final_answer", "extract"):
        return 2 * _TOKENS_PER_ITEM
    return _TOKENS_PER_ITEM * max(form.limit, 1) + 20


def _rewoo_plan(limit: int) -> str:
    """Return the plan grammar: up to `limit` steps, step k citing only `#E1`..`#E<k-1>`."""
    rules = ["root ::= item1"]
    for k in range(1, limit + 1):
        tools = '"Search["' if k == 1 else '("Search[" | "Lookup[" | "LLM[")'
        step = (
            f'"Plan: " word plain{{0,{MAX_PLAN_CHARS - 1}}} "\\n#E{k} = " {tools} input{k} "]\\n"'
        )
        rules.append(_item(k, step, k < limit))
        rules.append(_step_input(k))
    return "\n".join([*rules, _COMMON])


SHAPE_STEPS = {"single": 1, "comparison": 2, "bridge": 3}
"""The steps of each plan shape (`wikireact.models.local.plan_shape`)."""


def shaped_plan(plan: QuestionPlan, limit: int) -> str | None:
    """Return the grammar of a plan in `plan`'s shape (None: `limit` steps cannot hold it).

    Every Search opens a title the question names (a bridge's first: the one its relation
    starts from); a comparison's second Search opens another one than its first; a bridge's
    LLM step cites #E1 and its last step searches what that step found (`#E3 = Search[#E2]`).
    """
    if limit < SHAPE_STEPS[plan.shape]:
        return None
    why = f'"Plan: " word plain{{0,{MAX_PLAN_CHARS - 1}}}'

    def search(k: int, titles: tuple[str, ...], then: str = "") -> str:
        return " | ".join(
            f'{why} "\\n#E{k} = Search[" {gbnf_literal(t)} "]\\n"' + then.format(t=i)
            for i, t in enumerate(titles)
        )

    rules = [_COMMON]
    if plan.shape == "comparison":
        rules.append(f"root ::= {search(1, plan.titles, ' second{t}')}")
        for i, title in enumerate(plan.titles):
            others = tuple(t for t in plan.titles if t != title)
            rules.append(f"second{i} ::= {search(2, others)}")
    elif plan.shape == "bridge":
        entity = f'{why} "\\n#E2 = LLM[" word plain{{0,{MAX_INPUT_CHARS - 5}}} "#E1]\\n"'
        follow = f'{why} "\\n#E3 = Search[#E2]\\n"'
        rules.append(f"root ::= ({search(1, plan.first)}) {entity} {follow}")
    else:
        rules.append(f"root ::= {search(1, plan.titles)}")
    return "\n".join(rules) + "\n"


def _item(k: int, body: str, more: bool) -> str:
    """Return rule `item<k>`: `body`, then optionally item k+1 when `more`."""
    return f"item{k} ::= {body}" + (f" item{k + 1}?" if more else "")


def _step_input(k: int) -> str:
    """Return rule `input<k>`: text citing only `#E1`..`#E<k-1>`, never followed by a digit.

    `#E1` then `2` would read as `#E12`; after a reference comes a non-digit or the input's end.
    """
    most = MAX_INPUT_CHARS - 1
    if k == 1:
        return f"input1 ::= word plain{{0,{most}}}"
    numbers = " | ".join(f'"{n}"' for n in range(1, k))
    ref = f'"#E" ({numbers})'
    after = r"[^\x00-\x1f\x7f\[\]#0-9]"
    return (
        f"input{k} ::= {ref} | (word | {ref} {after}) (plain | {ref} {after}){{0,{most}}} ({ref})?"
    )
