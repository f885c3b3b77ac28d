"""The step format as a GBNF grammar, for grammar-constrained decoding with llama.cpp.

A small model decoding under this grammar can only write `Thought N: ...` on one line
then exactly one `Action N: Search[...]`, `Lookup[...]` or `Finish[...]`, and decoding
ends at the closing bracket. Whatever it writes therefore parses (`protocol.parse_output`).
The thought cannot contain brackets, so no action hides in it.

Optionally the Finish argument may not start with given phrases, in any case (the titles
the episode searched): Gemma 3 270M otherwise answers with the question's own subject ("Who wrote
Hamlet?" -> `Finish[Hamlet]`) even when its thought names the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from wikireact.models.local.answer_spans import answer_rules, gbnf_literal

MAX_THOUGHT_CHARS = 200
MAX_ARGUMENT_CHARS = 120
_TEXT = "\\n\\[\\]"
"""Characters no thought or argument may contain (escaped for a GBNF character class)."""

_RULES = f"""
thought ::= "Thought " number ": " opening [^{_TEXT}] [^{_TEXT}]{{0,{MAX_THOUGHT_CHARS - 1}}} "\\n"
argument ::= [^{_TEXT} ] [^{_TEXT}]{{0,{MAX_ARGUMENT_CHARS - 1}}}
rest ::= [^{_TEXT}]{{0,{MAX_ARGUMENT_CHARS - 1}}}
"""
_TEXT_BREAK = re.compile(r"[\n\[\]]")
"""What a literal inside an argument may not contain."""
_ACTION = 'action ::= "Action " number ": " ("Search[" title | "Lookup[" argument) "]"'
_FINISH = ' | "Action " number ": Finish[" answer "]"'


def step_grammar(
    *,
    require_thought: bool,
    number: int | None = None,
    not_answers: Iterable[str] = (),
    observations: Sequence[str] | None = None,
    question: str = "",
    not_searches: Iterable[str] = (),
    suggested_searches: Iterable[str] = (),
    thought_opening: str = "",
    part: Literal["step", "thought", "action"] = "step",
    thought: str = "",
    labels: Sequence[str] = (),
) -> str:
    """Return the GBNF text of one step: a thought (required or optional) and one action.

    With `number`, the step is numbered `number` (a small model otherwise copies the
    number of an exemplar's last step, and with it that step's Finish). A Finish argument
    cannot start with any of `not_answers` (compared case-insensitively). With
    `observations` (extractive answers), it is a run of their words that fits `question`
    (`wikireact.models.local.answer_spans`), and while there is no such run there is no Finish.
    A Search cannot start with any of `not_searches` (a title searched already, or that
    title with more text glued on), except the `suggested_searches`. A thought begins with
    `thought_opening`. `part` asks for only the thought line, or only the
    action after a `thought` already written (whose runs then narrow the answer). With
    `labels` (FEVER), a Finish argument is exactly one of them, and the other answer rules
    do not apply.
    """
    root = "root ::= thought action" if require_thought else "root ::= thought? action"
    if part != "step":
        root = f"root ::= {part}"
    numbered = f'number ::= "{number}"' if number is not None else "number ::= [1-9] [0-9]?"
    if labels:
        answer: str | None = "answer ::= " + " | ".join(gbnf_literal(x) for x in labels) + "\n"
    elif observations is None:
        answer = _excluding("answer", not_answers)
    else:
        answer = answer_rules(observations, not_answers, question=question, thought=thought)
    action = _ACTION + (_FINISH if answer else "")  # no Finish while there is nothing to answer
    searches = _excluding("title", not_searches, also=suggested_searches)
    opening = f"opening ::= {gbnf_literal(thought_opening)}"
    return f"{root}\n{_RULES.strip()}\n{action}\n{numbered}\n{opening}\n{answer or ''}{searches}"


def _excluding(name: str, phrases: Iterable[str], also: Iterable[str] = ()) -> str:
    """Rules for `name`: an argument starting with none of `phrases` (any case), or one of `also`.

    A trie of the phrases: at each node the text either follows a branch of the trie, or
    leaves it with any other character (then anything may follow), or ends; the character
    that would complete a phrase is not allowed.
    """
    exact = "".join(
        f"{gbnf_literal(t)} | " for t in also if t.strip() and not _TEXT_BREAK.search(t)
    )
    kept = sorted({p.lower() for p in phrases if p.strip() and not _TEXT_BREAK.search(p)})
    if not kept:
        return f"{name} ::= {exact}argument\n"
    trie: dict[str, dict] = {}
    ends: set[int] = set()
    for phrase in kept:
        node = trie
        for char in phrase:
            node = node.setdefault(char, {})
        ends.add(id(node))
    rules: list[str] = []

    def rule(node: dict[str, dict], node_name: str, depth: int) -> None:
        options = []
        for index, (char, child) in enumerate(sorted(node.items())):
            if id(child) in ends:
                continue  # this character would complete an excluded prefix: no way on
            child_name = f"{node_name}-{index}"
            options.append(f"[{_either_case(char)}] {child_name}")
            rule(child, child_name, depth + 1)
        leave = "".join(_either_case(c) for c in node)
        start = "" if depth else " "  # the argument's first character is not a space
        options.append(f"[^{_TEXT}{start}{leave}] rest")
        if depth:
            options.append('""')
        rules.append(f"{node_name} ::= {exact if not depth else ''}" + " | ".join(options))

    rule(trie, name, 0)
    return "\n".join(rules) + "\n"


def _either_case(char: str) -> str:
    """Return `char` in both cases, escaped for a GBNF character class."""
    both = dict.fromkeys(char.lower() + char.upper())
    return "".join("\\" + c if c in "\\^-[]" else c for c in both)
