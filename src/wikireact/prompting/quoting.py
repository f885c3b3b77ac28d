"""Text from outside (page text, lessons) made safe to quote in a prompt, between « and ».

Quoted text is one line of valid Unicode with no control or bidi characters and no fence
marks of its own, so it can never pass for an instruction or a step of the protocol.
"""

from __future__ import annotations

import re
import unicodedata

from wikireact.protocols.text import valid_unicode

OPEN_QUOTE, CLOSE_QUOTE = "«", "»"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def sanitize_observation(text: str) -> str:
    """Make page text safe to quote: one line, valid Unicode, no control or bidi characters, no fence marks."""
    text = _CONTROL.sub(" ", valid_unicode(text).replace("\n", " ").replace("\t", " "))
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = text.replace(OPEN_QUOTE, '"').replace(CLOSE_QUOTE, '"')
    return " ".join(text.split())
