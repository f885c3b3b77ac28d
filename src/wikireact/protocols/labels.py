"""FEVER's three labels, and reading what a model writes as one of them.

Under `task="fever"` a `Finish[...]` (and a Standard/CoT answer) must be `SUPPORTS`,
`REFUTES` or `NOT ENOUGH INFO`. Models write them many ways (`supports`, `Supported`,
`NOT ENOUGH INFORMATION`, `not enough info.`): `normalize_label` maps every form that can
only mean one label to it, and anything else to None (the caller then says what the three
labels are: `label_error`), never guessing between two.
"""

from __future__ import annotations

import difflib
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
_EDGE = " \t\n\"'`“”‘’«».,;:!?*_()"


def _plain(text: str) -> str:
    """Lowercase, drop quotes/punctuation at the ends, read `_`/`-` as spaces, one space apart."""
    return " ".join(text.strip(_EDGE).replace("_", " ").replace("-", " ").lower().split())


def normalize_label(text: str | None) -> Label | None:
    """Return the label `text` means (`supports`, `Supported`, `not enough info.`), else None."""
    return None if text is None else _FORMS.get(_plain(text))


def label_error(text: str) -> str:
    """Return the one-line reason `text` is not a label, with a did-you-mean when one is close."""
    guess = difflib.get_close_matches(_plain(text).upper(), LABELS, n=1, cutoff=0.5)
    hint = f" Did you mean {guess[0]}?" if guess else ""
    shown = text.strip()[:80]
    return (
        f"`{shown}` is not a label.{hint} The answer is one of the three labels: "
        f"Finish[SUPPORTS], Finish[REFUTES] or Finish[NOT ENOUGH INFO]."
    )


def as_verdict(result: Action | FormatError) -> Action | FormatError:
    """Return a FEVER step's action: a Finish with its label normalised, or why it has none."""
    if not isinstance(result, Action) or result.name != "Finish":
        return result
    label = normalize_label(result.argument)
    if label is None:
        return FormatError(label_error(result.argument), str(result))
    return Action("Finish", label)
