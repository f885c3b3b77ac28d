"""FEVER's three labels, and reading what a model writes as one of them.

Under `task="fever"` a `Finish[...]` (and a Standard/CoT answer) must be `SUPPORTS`,
`REFUTES` or `NOT ENOUGH INFO`. Models write them many ways (`supports`, `Supported`,
`NOT ENOUGH INFORMATION`, `not enough info.`): `normalize_label` maps every form that can
only mean one label to it, and anything else to None (the caller then says what the three
labels are: `label_error`), never guessing between two.

`label_error`'s did-you-mean names a label only for a slip of the pen (`SUPORTS`,
`REFUTE IT`, `not enough`): text close to one accepted form. Text that negates or hedges a
label (`not supported`, `unsupported`, `does not support`, `not refuted`, `irrefutable`,
`refutable`) looks like the label it denies, yet may mean either of the two others, so it
gets no hint: a model taking one would flip its own verdict.
"""

from __future__ import annotations

import difflib
import re
from typing import Literal

from wikireact.protocols.text import Action, FormatError

Label = Literal["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
LABELS: tuple[Label, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
LABELS_SHOWN = "SUPPORTS, REFUTES or NOT ENOUGH INFO"
_FORMS: dict[str, Label] = {
    "supports": "SUPPORTS",
    "support": "SUPPORTS",
    "supported": "SUPPORTS",
    "refutes": "REFUTES",
    "refute": "REFUTES",
    "refuted": "REFUTES",
    "not enough info": "NOT ENOUGH INFO",
    "not enough information": "NOT ENOUGH INFO",
    "nei": "NOT ENOUGH INFO",
}
"""Each accepted form (lowercase, punctuation and underscores as spaces) and its label."""
_HINT_CUTOFF = 0.8
"""How close (difflib ratio) text must be to an accepted form to be read as a slip of the pen."""
_NEGATIONS = frozenset(
    "not no never nor neither none nothing cannot without non lacks lack against"
    " dont doesnt isnt arent wasnt werent didnt cant wont".split()
)
"""Words that deny what follows or precedes them."""
_NEGATING_PREFIXES = ("un", "in", "ir", "im", "il", "non", "dis", "mis")
_VERDICT_WORDS = ("support", "supports", "supported", "refute", "refutes", "refuted")
_WORD = re.compile(r"[\w'’]+")
_HEDGED = re.compile(r"n['’]t$|(?:sup|ref)\w*(?:able|ible)$")
"""A contracted `not` (doesn't), or a verdict that may hold (refutable: may be refuted)."""
_EDGE = " \t\n\"'`“”‘’«».,;:!?*_()"


def _plain(text: str) -> str:
    """Lowercase, drop quotes/punctuation at the ends, read `_`/`-` as spaces, one space apart."""
    return " ".join(text.strip(_EDGE).replace("_", " ").replace("-", " ").lower().split())


def normalize_label(text: str | None) -> Label | None:
    """Return the label `text` means (`supports`, `Supported`, `not enough info.`), else None."""
    return None if text is None else _FORMS.get(_plain(text))


def label_error(text: str) -> str:
    """Return the one-line reason `text` is not a label, with a did-you-mean for a slip of the pen."""
    guess = label_hint(text)
    hint = f" Did you mean {guess}?" if guess else ""
    shown = text.strip()[:80]
    return (
        f"`{shown}` is not a label.{hint} The answer is one of the three labels: "
        f"Finish[SUPPORTS], Finish[REFUTES] or Finish[NOT ENOUGH INFO]."
    )


def label_hint(text: str) -> Label | None:
    """Return the label `text` is a slip of the pen for; None when it is far from all, or denies one."""
    plain = _plain(text)
    if _denies(plain):
        return None
    close = difflib.get_close_matches(plain, _FORMS, n=1, cutoff=_HINT_CUTOFF)
    return _FORMS[close[0]] if close else None


def _denies(plain: str) -> bool:
    """Whether plain text negates or hedges (`not supported`, `irrefutable`, `refutable`)."""
    words = _WORD.findall(plain.replace("not enough", "enough"))  # NOT ENOUGH INFO denies nothing
    return any(_denied(word) for word in words)


def _denied(word: str) -> bool:
    """Whether one word negates or hedges: `not`, `doesn't`, `unsupported`, `refutable`."""
    if word in _NEGATIONS or _HEDGED.search(word):
        return True
    return any(
        word.startswith(prefix)
        and difflib.get_close_matches(word[len(prefix) :], _VERDICT_WORDS, cutoff=_HINT_CUTOFF)
        for prefix in _NEGATING_PREFIXES
    )


def as_verdict(result: Action | FormatError) -> Action | FormatError:
    """Return a FEVER step's action: a Finish with its label normalised, or why it has none."""
    if not isinstance(result, Action) or result.name != "Finish":
        return result
    label = normalize_label(result.argument)
    if label is None:
        return FormatError(label_error(result.argument), str(result))
    return Action("Finish", label)
