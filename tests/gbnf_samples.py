"""Random strings drawn from a GBNF grammar, and llama.cpp's own verdict on a string.

`sample` reads the part of GBNF that wikireact's grammars use (one rule per line; string
literals, character classes, rule references, groups, `|`, `?`, `*`, `+`, `{m,n}`) and
draws a random string the grammar admits, with characters from `ALPHABET` (ASCII, accents,
guillemets, CJK, and spaces Python strips: no-break, ideographic, line separator). `llama_accepts` asks llama.cpp's
grammar sampler, over a model's vocabulary, whether it admits a string: the check that
`sample` reads GBNF as llama.cpp does.
"""

from __future__ import annotations

import random
import re
from typing import Any

ALPHABET = [chr(c) for c in range(32, 127)] + list("\n\t\x0b\x85éü«»中\u00a0\u2028\u3000")
_TOKEN = re.compile(
    r'\s*(?:(?P<lit>"(?:\\.|[^"\\])*")|(?P<cls>\[(?:\\.|[^\]\\])*\])|(?P<rep>\{\d*,?\d*\})'
    r"|(?P<op>[()|?*+])|(?P<name>[A-Za-z][A-Za-z0-9_-]*))"
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-"}


def _unescape(text: str) -> list[str]:
    """Return the characters of a literal's or class's body, escapes resolved."""
    chars, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            width = {"x": 2, "u": 4}.get(text[i + 1])
            if width:
                chars.append(chr(int(text[i + 2 : i + 2 + width], 16)))
                i += 2 + width
                continue
            chars.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        chars.append(text[i])
        i += 1
    return chars


def _class(body: str) -> list[str]:
    """Return the characters of `ALPHABET` a class `[...]` admits."""
    negated = body.startswith("^")
    raw = body[1:] if negated else body
    # ranges: an unescaped `-` between two characters (escapes were resolved above)
    spans, i = [], 0
    pieces = re.findall(r"\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\.|.", raw)
    resolved = [_unescape(p)[0] for p in pieces]
    while i < len(pieces):
        if i + 2 < len(pieces) and pieces[i + 1] == "-":
            spans.append((resolved[i], resolved[i + 2]))
            i += 3
        else:
            spans.append((resolved[i], resolved[i]))
            i += 1
    inside = lambda c: any(lo <= c <= hi for lo, hi in spans)  # noqa: E731
    return [c for c in ALPHABET if inside(c) != negated]


def _parse(grammar: str) -> dict[str, Any]:
    """Return each rule's expression tree: ("alt", [("seq", [items])]), items with repeats."""
    rules: dict[str, Any] = {}
    for line in grammar.splitlines():
        if "::=" not in line:
            continue
        name, _, body = line.partition("::=")
        tokens = [(m.lastgroup, m.group(m.lastgroup or "")) for m in _TOKEN.finditer(body)]
        expr, _end = _alternatives(tokens, 0)
        rules[name.strip()] = expr
    return rules


def _alternatives(tokens: list[tuple[str | None, str]], i: int) -> tuple[Any, int]:
    options: list[Any] = []
    sequence: list[Any] = []
    while i < len(tokens):
        kind, text = tokens[i]
        if kind == "op" and text == ")":
            break
        i += 1
        if kind == "op" and text == "|":
            options.append(("seq", sequence))
            sequence = []
        elif kind == "op" and text == "(":
            inner, i = _alternatives(tokens, i)
            sequence.append([inner, 1, 1])
            i += 1  # the `)`
        elif kind in ("op", "rep"):
            low, high = {"?": (0, 1), "*": (0, 6), "+": (1, 6)}.get(text, (None, None))
            if kind == "rep":
                found = text[1:-1].split(",")
                low = int(found[0] or 0)
                high = int(found[-1]) if found[-1] else low + 6
            sequence[-1][1:] = [low, high]
        elif kind == "lit":
            sequence.append([("lit", "".join(_unescape(text[1:-1]))), 1, 1])
        elif kind == "cls":
            sequence.append([("cls", _class(text[1:-1])), 1, 1])
        else:
            sequence.append([("ref", text), 1, 1])
    options.append(("seq", sequence))
    return ("alt", options), i


def sample(grammar: str, rng: random.Random) -> str:
    """Return a random string `grammar` (root rule `root`) admits."""
    rules = _parse(grammar)

    def draw(node: Any) -> str:
        kind, value = node
        if kind == "alt":
            return draw(rng.choice(value))
        if kind == "seq":
            out = []
            for item, low, high in value:
                count = low + sum(rng.random() < 0.5 for _ in range(high - low))
                if high - low > 8:  # long repeats: sometimes short, sometimes the whole range
                    count = rng.choice([low, low + 1, rng.randint(low, high), high])
                out += [draw(item) for _ in range(count)]
            return "".join(out)
        if kind == "lit":
            return str(value)
        if kind == "cls":
            return rng.choice(value)
        return draw(rules[value])

    return draw(rules["root"])


def llama_accepts(client: Any, grammar: str, text: str) -> bool:
    """Whether llama.cpp's grammar sampler, over `client`'s vocabulary, admits exactly `text`."""
    import llama_cpp

    from wikireact.models.local.lazy_grammar import LazyGrammar

    tokens = list(client.tokenize(text.encode(), add_bos=False, special=False))
    if tokens and not text.startswith(" ") and client.detokenize(tokens[:1]) == b" ":
        tokens = tokens[1:]  # the tokenizer's own leading space (SentencePiece's dummy prefix)
    checker = LazyGrammar(client, grammar)
    try:
        for token in tokens:
            if not checker._allows(int(token), 0.0):
                return False
            llama_cpp.llama_sampler_accept(checker._sampler, int(token))
        return checker._allows(int(client.token_eos()), 0.0)
    finally:
        checker.close()
