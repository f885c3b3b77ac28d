"""Self-contained HTML pages: one file, its data embedded as JSON its own script reads.

A page made here loads nothing: its template carries its CSS and JavaScript inline, and a
Content-Security-Policy (`NO_NETWORK`) forbids any request, so it works offline and a
hostile text in the data cannot make it fetch anything. The data are embedded as JSON in a
`<script type="application/json">` block, with every `<`, `>` and `&` escaped, so no text in
them can end that block; the page's script puts texts on the page as text only.
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

NO_NETWORK = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
"""The page's Content-Security-Policy: inline script and style only, no request at all."""
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_SLOT = re.compile(r"\{\{(TITLE|CSP|DATA)\}\}")


def finite(value: Any) -> Any:
    """Return `value` with every NaN or infinite float replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(key): finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def script_json(data: Any) -> str:
    """Return `data` as JSON that is safe inside a `<script>` element (ASCII, no `<`, `>`, `&`).

    Texts with invalid Unicode (lone surrogates) survive as JSON escapes; values JSON
    cannot hold are written as their text.
    """
    text = json.dumps(finite(data), ensure_ascii=True, allow_nan=False, default=str)
    return re.sub("[<>&]", lambda m: _ESCAPES[m.group()], text)


def fill(template: str, title: str, data: Any) -> str:
    """Return `template` with `{{TITLE}}` (escaped text), `{{CSP}}` and `{{DATA}}` filled in, once each.

    One pass: a slot's name inside the title or the data is never filled in again.
    """
    parts = {"TITLE": html.escape(title), "CSP": NO_NETWORK, "DATA": script_json(data)}
    return _SLOT.sub(lambda m: parts[m.group(1)], template)
