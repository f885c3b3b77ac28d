"""Which form a model call's reply must take, told to the model through the call's run metadata.

An agent's node that expects a reply of a given shape (ReWOO's plan, Plan-and-Execute's
numbered sub-goals, a Reflexion lesson, a LATS value) says so with a `ReplyForm` in the
call's metadata (`REPLY_FORM_KEY`). A local model decodes under that form's grammar
(`wikireact.models.local.reply_grammars`), so whatever it writes is read by the agent's own
reader; a provider model never looks at run metadata, so its calls are unchanged, and the
model cache passes the metadata on to the model behind it. Metadata holds only plain values
(`as_metadata`), as tracers and the served graph serialize it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from wikireact.models.call_metadata import REPLY_FORM_KEY

ReplyKind = Literal[
    "rewoo_plan", "subgoals", "replan", "final_answer", "reflection", "value", "extract"
]
"""`rewoo_plan`: `Plan:` lines and `#E<n> = Tool[input]` steps; `subgoals`: a numbered list;
`replan`: a numbered list or `Finish[answer]`; `final_answer`: `Finish[answer]` only;
`reflection`: a lesson of one or two sentences; `value`: `Value: N`, N from 1 to 10;
`extract`: a short answer to an instruction about the fenced text it gives (ReWOO's LLM step)."""
KINDS: tuple[ReplyKind, ...] = get_args(ReplyKind)


@dataclass(frozen=True)
class ReplyForm:
    """The reply a call expects: its kind, at most `limit` items, a Finish among `labels` if any."""

    kind: ReplyKind
    limit: int = 0
    """The most steps or sub-goals the reply may list (0: the kind has no list)."""
    labels: tuple[str, ...] = ()
    """The only answers a Finish may give (FEVER's labels); empty: any short answer."""

    def as_metadata(self) -> dict[str, Any]:
        """Return the run metadata that carries this form."""
        return {REPLY_FORM_KEY: {"kind": self.kind, "limit": self.limit, "labels": self.labels}}


def read_reply_form(metadata: Mapping[str, Any] | None) -> ReplyForm | None:
    """Return the form a call's run `metadata` asks for (None: none, or one not understood)."""
    found = (metadata or {}).get(REPLY_FORM_KEY)
    if not isinstance(found, Mapping) or found.get("kind") not in KINDS:
        return None
    limit, labels = found.get("limit", 0), found.get("labels", ())
    if not isinstance(limit, int) or not all(isinstance(x, str) for x in labels or ()):
        return None
    return ReplyForm(found["kind"], max(limit, 0), tuple(labels or ()))
