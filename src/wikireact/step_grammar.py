"""The step format as a GBNF grammar, for grammar-constrained decoding with llama.cpp.

A small model decoding under this grammar can only write `Thought N: ...` on one line
then exactly one `Action N: Search[...]`, `Lookup[...]` or `Finish[...]`, and decoding
ends at the closing bracket. Whatever it writes therefore parses (`protocol.parse_output`).
The thought cannot contain brackets, so no action hides in it.
"""

from __future__ import annotations

MAX_THOUGHT_CHARS = 200
MAX_ARGUMENT_CHARS = 120

_RULES = f"""
thought ::= "Thought " number ": " [^\\n\\[\\]] [^\\n\\[\\]]{{0,{MAX_THOUGHT_CHARS - 1}}} "\\n"
action ::= "Action " number ": " verb "[" argument "]"
verb ::= "Search" | "Lookup" | "Finish"
argument ::= [^\\n\\[\\] ] [^\\n\\[\\]]{{0,{MAX_ARGUMENT_CHARS - 1}}}
"""


def step_grammar(*, require_thought: bool, number: int | None = None) -> str:
    """Return the GBNF text of one step: a thought (required or optional) and one action.

    With `number`, the step is numbered `number` (a small model otherwise copies the
    number of an exemplar's last step, and with it that step's Finish).
    """
    root = 'root ::= thought action' if require_thought else 'root ::= thought? action'
    numbered = f'number ::= "{number}"' if number is not None else "number ::= [1-9] [0-9]?"
    return f"{root}\n{_RULES.strip()}\n{numbered}\n"
