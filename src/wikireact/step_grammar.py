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

from collections.abc import Iterable

MAX_THOUGHT_CHARS = 200
MAX_ARGUMENT_CHARS = 120
_TEXT = "\\n\\[\\]"
"""Characters no thought or argument may contain (escaped for a GBNF character class)."""

_RULES = f"""
thought ::= "Thought " number ": " [^{_TEXT}] [^{_TEXT}]{{0,{MAX_THOUGHT_CHARS - 1}}} "\\n"
action ::= "Action " number ": " ("Search[" | "Lookup[") argument "]" | "Action " number ": Finish[" answer "]"
argument ::= [^{_TEXT} ] [^{_TEXT}]{{0,{MAX_ARGUMENT_CHARS - 1}}}
rest ::= [^{_TEXT}]{{0,{MAX_ARGUMENT_CHARS - 1}}}
"""


def step_grammar(
    *, require_thought: bool, number: int | None = None, not_answers: Iterable[str] = ()
) -> str:
    """Return the GBNF text of one step: a thought (required or optional) and one action.

    With `number`, the step is numbered `number` (a small model otherwise copies the
    number of an exemplar's last step, and with it that step's Finish). A Finish argument
    cannot start with any of `not_answers` (compared case-insensitively).
    """
    root = "root ::= thought action" if require_thought else "root ::= thought? action"
    numbered = f'number ::= "{number}"' if number is not None else "number ::= [1-9] [0-9]?"
    return f"{root}\n{_RULES.strip()}\n{numbered}\n{_answer_rules(not_answers)}"


def _answer_rules(not_answers: Iterable[str]) -> str:
    """Rules for `answer`: a non-empty argument that starts with none of `not_answers`.

    A trie of the forbidden phrases: at each node the text either follows a branch of the
    trie, or leaves it with any other character (then anything may follow), or ends; the
    character that would complete a forbidden phrase is not allowed.
    """
    phrases = sorted({p.lower() for p in not_answers if p and not any(c in p for c in "\n[]")})
    if not phrases:
        return "answer ::= argument\n"
    trie: dict[str, dict] = {}
    ends: set[int] = set()
    for phrase in phrases:
        node = trie
        for char in phrase:
            node = node.setdefault(char, {})
        ends.add(id(node))
    rules: list[str] = []

    def rule(node: dict[str, dict], name: str, depth: int) -> None:
        options = []
        for index, (char, child) in enumerate(sorted(node.items())):
            if id(child) in ends:
                continue  # this character would complete a forbidden phrase: no way on
            child_name = f"{name}-{index}"
            options.append(f"[{_either_case(char)}] {child_name}")
            rule(child, child_name, depth + 1)
        leave = "".join(_either_case(c) for c in node)
        start = "" if depth else " "  # the argument's first character is not a space
        options.append(f"[^{_TEXT}{start}{leave}] rest")
        if depth:
            options.append('""')
        rules.append(f"{name} ::= " + " | ".join(options))

    rule(trie, "answer", 0)
    return "\n".join(rules) + "\n"


def _either_case(char: str) -> str:
    """Return `char` in both cases, escaped for a GBNF character class."""
    both = dict.fromkeys(char.lower() + char.upper())
    return "".join("\\" + c if c in "\\^-[]" else c for c in both)
