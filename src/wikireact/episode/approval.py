"""Reading a human reviewer's answer to a proposed action (approval mode).

Resume values: `True` / `{"approve": true}` approve; `{"action": "Search[...]"}` (or a tool
call `{"action": {"tool": "search", "args": {"title": "..."}}}`) replaces the action;
`{"reject": "why"}` / `{"approve": false}` / `False` reject it. Any dict may carry
`"by": "NAME"`, the reviewer's identity, which the audit trail records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wikireact.episode.audit import structured_action
from wikireact.protocols.text import Action, FormatError, parse_action
from wikireact.protocols.tools import action_from_call
from wikireact.state import ActionDict, Approval

MAX_REVIEWER_CHARS = 100
APPROVAL_HINT = (
    "Resume with true (approve), {'action': 'Search[...]'} (replace) or {'reject': 'why'} "
    "(reject); add 'by': NAME to sign the decision."
)


@dataclass(frozen=True)
class Verdict:
    """What to do after a reviewer's answer: run `action`, or not (then `observation` says why)."""

    action: Action | None
    observation: str
    approval: Approval


def read_decision(proposed: Action, value: Any) -> Verdict:
    """Return the verdict of a reviewer's resume `value` on the `proposed` action. Never raises."""
    by = _reviewer(value)
    if value is True or value is None or value in ("y", "yes", "approve"):
        return _approved(proposed, by)
    if isinstance(value, dict):
        if value.get("reject") is not None or value.get("approve") is False:
            return _rejected(proposed, str(value.get("reject") or "no reason given").strip(), by)
        if "action" in value:
            edited = _edited_action(value["action"])
            if isinstance(edited, FormatError):
                return _rejected(
                    proposed,
                    f"the replacement action was invalid: {edited.message}",
                    by,
                    observation=f"The reviewer's replacement action was invalid: {edited.message}",
                )
            if edited == proposed:
                return _approved(proposed, by)
            return Verdict(
                edited,
                "",
                Approval(
                    decision="edited",
                    by=by,
                    note=None,
                    original_action=structured_action(_as_dict(proposed)),
                ),
            )
        if value.get("approve") is True:
            return _approved(proposed, by)
    if value is False or value in ("n", "no", "reject"):
        return _rejected(proposed, "no reason given", by)
    return _rejected(
        proposed,
        f"answer {value!r} not understood",
        by,
        observation=f"The reviewer's answer {value!r} was not understood; {proposed} was not executed.",
    )


def _edited_action(replacement: Any) -> Action | FormatError:
    if isinstance(replacement, dict):
        return action_from_call(
            replacement.get("tool", replacement.get("name")), replacement.get("args")
        )
    return parse_action(str(replacement))


def _reviewer(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("by"), str) and value["by"].strip():
        return " ".join(value["by"].split())[:MAX_REVIEWER_CHARS]
    return None


def _approved(action: Action, by: str | None) -> Verdict:
    return Verdict(
        action, "", Approval(decision="approved", by=by, original_action=None, note=None)
    )


def _rejected(action: Action, note: str, by: str | None, observation: str | None = None) -> Verdict:
    return Verdict(
        None,
        observation or f"A human reviewer rejected {action}: {note}",
        Approval(decision="rejected", by=by, original_action=None, note=note),
    )


def _as_dict(action: Action) -> ActionDict:
    return ActionDict(name=action.name, argument=action.argument)
