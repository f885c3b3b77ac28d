"""Regular expressions mean the same on every supported Python.

CPython 3.11.2 (Debian 12's `python3`) mishandles possessive quantifiers: there
`\\w++(?:['’.,]\\w++)*+` matched `Melville.` with its dot, so extractive answers ran across
sentence ends. Possessive quantifiers and atomic groups (new in 3.11) are therefore not
used anywhere: every pattern in the package, the benchmarks and the examples is checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from wikireact.models.local.answer_spans import _WORD

ROOT = Path(__file__).resolve().parents[2]
RE_FUNCTIONS = frozenset(
    {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
)
UNPORTABLE = ("POSSESSIVE_REPEAT", "ATOMIC_GROUP")


def regex_literals(path: Path) -> list[tuple[int, str]]:
    """Every literal pattern passed to a function of `re` in the file, with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in RE_FUNCTIONS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def unportable_parts(pattern: str) -> set[str]:
    """The possessive repeats and atomic groups in `pattern` (from `re`'s own parser)."""
    from re import _parser  # type: ignore[attr-defined]

    seen: set[str] = set()

    def walk(items: object) -> None:
        if isinstance(items, (list, tuple)) or type(items).__name__ == "SubPattern":
            for item in items:  # type: ignore[attr-defined]
                walk(item)
        elif str(items) in UNPORTABLE:
            seen.add(str(items))

    walk(_parser.parse(pattern))
    return seen


def python_files() -> list[Path]:
    return sorted(
        p
        for folder in ("src", "bench", "examples", "tests")
        for p in (ROOT / folder).rglob("*.py")
        if p.name != Path(__file__).name
    )


def test_the_checker_sees_possessive_quantifiers_and_atomic_groups() -> None:
    assert unportable_parts(r"\w++(?:[.,]\w++)*+") == {"POSSESSIVE_REPEAT"}
    assert unportable_parts(r"a(?>bc|b)c") == {"ATOMIC_GROUP"}
    assert unportable_parts(r"\w+(?:[.,]\w+)*\s*\[") == set()


def test_no_pattern_uses_possessive_quantifiers_or_atomic_groups() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {pattern}"
        for path in python_files()
        for line, pattern in regex_literals(path)
        if unportable_parts(pattern)
    ]
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "writer Herman Melville. Its first 18, 1851",
            ["writer", "Herman", "Melville", "Its", "first", "18", "1851"],
        ),
        ("3,776.24 m, Jupiter's moon", ["3,776.24", "m", "Jupiter's", "moon"]),
        ("J. R. R. Tolkien", ["J", "R", "R", "Tolkien"]),
    ],
)
def test_a_word_ends_before_the_punctuation_that_follows_it(text: str, words: list[str]) -> None:
    assert _WORD.findall(text) == words
