"""The paper's text protocol: `Thought: ...` then `Action: Search[..] | Lookup[..] | Finish[..]`.

`parse_output` turns a model's text into an `Action` or a `FormatError`; it never raises
and never evaluates anything: arguments are plain strings.

Model text can be hostile: every pattern here runs in linear time (no two runs that can
match the same character side by side, so a failed match gives back each character once;
no pattern retried at every line start), so thousands of blank lines parse in milliseconds
(bench/parse_speed.py). Text that is not valid Unicode (lone surrogates such as
U+D800, which JSON text may hold) is replaced with U+FFFD where it enters the state
(`valid_unicode`), so it can be searched, stored, shown and resumed alike.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

ActionName = Literal["Search", "Lookup", "Finish"]
VERBS: tuple[ActionName, ...] = ("Search", "Lookup", "Finish")
MAX_ARGUMENT_CHARS = 300
VALID_ACTIONS_HINT = (
    "Valid actions are Search[title], Lookup[keyword] and Finish[answer], "
    "written on one line as `Action N: Verb[argument]`."
)

# `\s*[*_`>#]*\s*` would try every split of a long run of spaces between its two `\s*`
# (cubic). Here each optional part starts with a character that no part before it can
# match, so there is one way to split: linear. No possessive quantifiers or atomic groups:
# CPython 3.11.2 mishandles them (tests/package/test_regex_portability.py).
_OBSERVATION_WORD = re.compile(r"observation\b", re.IGNORECASE)
_LABEL_MARKS = "*_`>#"
_ACTION_LABEL = re.compile(
    r"^\s*(?:[*_`>#]+\s*)?action\s*(?:\d+\s*)?(?:[*_`]+\s*)?:\s*(.*)$", re.IGNORECASE
)
_THOUGHT_LABEL = re.compile(
    r"^\s*(?:[*_`>#]+\s*)?thought\s*(?:\d+\s*)?(?:[*_`]+\s*)?:[*_`\s]*", re.IGNORECASE
)
_VERB_CALL = re.compile(r"([A-Za-z]+)\s*\[")
_ANY_ACTION = re.compile(r"\b(search|lookup|finish)\s*\[", re.IGNORECASE)
_BARE_CALL = re.compile(r"(search|lookup|finish)\s*\[", re.IGNORECASE)
_QUOTES = "\"'`“”‘’«»"


@dataclass(frozen=True)
class Action:
    """A valid action: its verb and its (non-empty) argument."""

    name: ActionName
    argument: str

    def __str__(self) -> str:
        """Render the action as the protocol writes it, e.g. `Search[Ed Wood]`."""
        return f"{self.name}[{self.argument}]"


@dataclass(frozen=True)
class FormatError:
    """Why a model output is not a valid step; `action_text` is what was attempted."""

    message: str
    action_text: str = ""


@dataclass(frozen=True)
class ParsedOutput:
    """A model output split into its thought and its action (or format error)."""

    thought: str
    result: Action | FormatError


def valid_unicode(text: str) -> str:
    r"""Return `text` with every lone surrogate (e.g. `\ud800`) replaced by U+FFFD.

    A surrogate pair written as two code points is joined into its character. Such text
    cannot be encoded (to a terminal, a database, an HTTP request), so it is repaired
    once, where it enters the state, rather than failing wherever it is used later.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def cut_at_observation(text: str) -> str:
    """Drop everything from the first line that starts an `Observation` the model made up.

    Also repairs invalid Unicode (`valid_unicode`): this is where model text enters the state.
    """
    text = valid_unicode(text)
    start = _observation_line_start(text)
    return text[:start].rstrip() if start is not None else text.rstrip()


def _observation_line_start(text: str) -> int | None:
    r"""Start of the first line matching `^\s*[*_`>#]*\s*observation\b` (multiline), in linear time.

    For each occurrence of the word, step back over whitespace, label marks and whitespace:
    any line start in that stretch begins a matching line; take the first. The stretches
    of different occurrences do not overlap, so each character is visited a bounded number
    of times (the regex itself retries from every line start of a blank run: cubic).
    """
    for word in _OBSERVATION_WORD.finditer(text):
        begin = start = word.start()
        while start > 0 and text[start - 1].isspace():
            start -= 1
        while start > 0 and text[start - 1] in _LABEL_MARKS:
            start -= 1
        while start > 0 and text[start - 1].isspace():
            start -= 1
        if start == 0 or text[start - 1] == "\n":
            return start
        newline = text.find("\n", start, begin)
        if newline != -1:
            return newline + 1
    return None


def parse_output(text: str, *, require_thought: bool = False) -> ParsedOutput:
    """Parse a model output into a thought and an action or a format error. Never raises."""
    try:
        return _parse(valid_unicode(text if isinstance(text, str) else str(text)), require_thought)
    except Exception as exc:  # defensive: the parser must never take an episode down
        return ParsedOutput("", FormatError(f"could not read the output ({type(exc).__name__})."))


def parse_action(text: str) -> Action | FormatError:
    """Parse one action such as `Search[Ed Wood]` (tolerant of case, quotes, backticks)."""
    return _parse_action_text(valid_unicode(text))


def _parse(text: str, require_thought: bool) -> ParsedOutput:
    text = cut_at_observation(text.replace("\r\n", "\n").replace("\r", "\n"))
    lines = text.split("\n")
    action_lines = [i for i, line in enumerate(lines) if _ACTION_LABEL.match(line)]
    if not action_lines:
        # Tolerate a bare `Search[...]` line with no label.
        action_lines = [i for i, line in enumerate(lines) if _starts_with_call(line)]
        if not action_lines:
            return ParsedOutput(
                _thought(lines), FormatError("no action found. " + VALID_ACTIONS_HINT)
            )
        raw_actions = [lines[i].strip() for i in action_lines]
    else:
        raw_actions = [_ACTION_LABEL.match(lines[i]).group(1) for i in action_lines]  # type: ignore[union-attr]
    thought = _thought(lines[: action_lines[0]])
    if len(action_lines) > 1:
        return ParsedOutput(
            thought,
            FormatError(
                "several actions in one output; give exactly one. " + VALID_ACTIONS_HINT,
                raw_actions[0].strip(),
            ),
        )
    if require_thought and not thought:
        return ParsedOutput(
            thought,
            FormatError(
                "no thought before the action; write `Thought N: ...` first.",
                raw_actions[0].strip(),
            ),
        )
    return ParsedOutput(thought, _parse_action_text(raw_actions[0]))


def _thought(lines: list[str]) -> str:
    joined = " ".join(line.strip() for line in lines if line.strip())
    return _THOUGHT_LABEL.sub("", joined, count=1).strip()


def _starts_with_call(line: str) -> bool:
    stripped = line.strip().strip(_QUOTES + "*_ ")
    return bool(_BARE_CALL.match(stripped))


def _parse_action_text(raw: str) -> Action | FormatError:
    text = raw.strip().strip(_QUOTES + "*_ ").strip()
    shown = raw.strip()[:200]
    call = _VERB_CALL.match(text)
    if not call:
        return FormatError(
            f"`{shown}` is not of the form Verb[argument]. " + VALID_ACTIONS_HINT, shown
        )
    verb = _canonical_verb(call.group(1))
    if verb is None:
        guess = difflib.get_close_matches(call.group(1).capitalize(), VERBS, n=1, cutoff=0.5)
        hint = f" Did you mean {guess[0]}?" if guess else ""
        return FormatError(f"unknown action `{call.group(1)}`.{hint} " + VALID_ACTIONS_HINT, shown)
    close = _matching_bracket(text, call.end() - 1)
    if close is None:
        return FormatError(f"`{shown}` has no closing bracket. " + VALID_ACTIONS_HINT, shown)
    if _ANY_ACTION.search(text[close + 1 :]):
        return FormatError(
            "several actions in one output; give exactly one. " + VALID_ACTIONS_HINT, shown
        )
    return make_action(verb, text[call.end() : close], shown, hint=" " + VALID_ACTIONS_HINT)


def make_action(
    verb: ActionName, argument: str, shown: str, *, hint: str = ""
) -> Action | FormatError:
    """Return `verb` with its argument normalised (quotes, spaces), or why it is not valid.

    Shared by both protocols, so the same argument gives the same action in each.
    """
    argument = argument.strip().strip(_QUOTES).strip()
    if not argument:
        return FormatError(f"{verb} needs a non-empty argument.{hint}", shown)
    if len(argument) > MAX_ARGUMENT_CHARS:
        return FormatError(f"the argument is longer than {MAX_ARGUMENT_CHARS} characters.", shown)
    return Action(verb, " ".join(argument.split()))


def _canonical_verb(word: str) -> ActionName | None:
    for verb in VERBS:
        if word.lower() == verb.lower():
            return verb
    return None


def _matching_bracket(text: str, open_index: int) -> int | None:
    """Index of the `]` closing the `[` at open_index, allowing nested brackets.

    When the nesting never balances (e.g. `Search[Foo [band]`), the last `]` is used.
    """
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i
    last = text.rfind("]")
    return last if last > open_index else None
