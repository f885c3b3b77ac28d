r"""JSON text from files: one parser whose errors say what is wrong, and JSON lines.

`parse_json` turns every way `json.loads` can fail on hostile text (a syntax error, nesting
deeper than the interpreter's stack, an integer of more digits than Python converts) into
one `JsonTextError` line, so each caller can name its file.

JSON lines (`trajectories.jsonl`, `.jsonl` datasets) are split on "\n" only, by
`json_lines`: `str.splitlines()` also splits at U+2028, U+2029, U+0085 and other
separators, which JSON strings may hold raw, and would cut a record in two. `json_line`
writes one record per line and escapes those three characters as well, so other tools
that split lines the same way read the files whole too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from wikireact.errors import JsonTextError

_RAW_SEPARATORS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"}
"""Line separators of `str.splitlines()` that `json.dumps(ensure_ascii=False)` leaves raw."""


def parse_json(text: str | bytes) -> Any:
    """Return the value of JSON `text`; raise `JsonTextError` (one line, no file name) if it has none."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonTextError(exc.msg, exc.lineno, exc.colno) from None
    except RecursionError:
        raise JsonTextError("its values are nested too deeply") from None
    except ValueError as exc:  # an integer with more digits than int() converts
        detail = str(exc).split(":")[0]
        raise JsonTextError(f"it holds a number too long to read ({detail})") from None


def json_line(value: Any) -> str:
    """Return `value` as one line of JSON lines (UTF-8 text kept readable, ending in a newline)."""
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in _RAW_SEPARATORS.items():
        text = text.replace(raw, escaped)  # only ever inside a JSON string: the escape is exact
    return text + "\n"


def json_lines(text: str) -> Iterator[tuple[int, str]]:
    """Yield `(line number, line)` for each non-blank line of JSON-lines `text`, split at newlines only."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of JSON-lines `text`, skipping lines that are not one (a torn last line)."""
    for _, line in json_lines(text):
        try:
            value = parse_json(line)
        except JsonTextError:
            continue
        if isinstance(value, dict):
            yield value
