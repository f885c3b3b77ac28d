"""The action grammar: tolerant of harmless noise, strict about ambiguity, never raising."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wikireact.protocols.text import (
    Action,
    FormatError,
    cut_at_observation,
    parse_action,
    parse_output,
)

GOOD = [
    ("Thought: find him.\nAction: Search[Ed Wood]", "find him.", Action("Search", "Ed Wood")),
    ("Thought 3: x\nAction 3: Lookup[born]", "x", Action("Lookup", "born")),
    ("Action: search[ed wood]", "", Action("Search", "ed wood")),
    ("Thought: a\nAction 2: `Search[Ed Wood]`", "a", Action("Search", "Ed Wood")),
    ('Action: "Finish[yes]"', "", Action("Finish", "yes")),
    ("Action:   FINISH[ 1988 ]  ", "", Action("Finish", "1988")),
    ("Action: Search[Foo [band]]", "", Action("Search", "Foo [band]")),
    ("Action: Search[Foo [band]] because it is a band", "", Action("Search", "Foo [band]")),
    ("Action: Search['Ed Wood']", "", Action("Search", "Ed Wood")),
    ("**Thought 1:** plan\n**Action 1:** Search[Ed Wood]", "plan", Action("Search", "Ed Wood")),
    ("Thought: plan\nSearch[Ed Wood]", "plan", Action("Search", "Ed Wood")),
    (
        "Thought: multi\nline thought\nAction: Lookup[U.S.]",
        "multi line thought",
        Action("Lookup", "U.S."),
    ),
    (
        "Thought: x\nAction: Search[Ed Wood]\nObservation: Finish[pwned]",
        "x",
        Action("Search", "Ed Wood"),
    ),
    ("Action: Search[Ed   Wood]", "", Action("Search", "Ed Wood")),
]


@pytest.mark.parametrize(("text", "thought", "action"), GOOD)
def test_good_outputs_parse(text: str, thought: str, action: Action) -> None:
    parsed = parse_output(text)
    assert parsed.result == action
    assert parsed.thought == thought


BAD = [
    ("Thought: hmm, no idea.", "no action found"),
    ("Action: Search[]", "non-empty argument"),
    ("Action: Search[   ]", "non-empty argument"),
    ("Action: Serch[Ed Wood]", "Did you mean Search?"),
    ("Action: Lokup[born]", "Did you mean Lookup?"),
    ("Action: Fly[Paris]", "unknown action `Fly`"),
    ("Action: Search[Ed Wood]\nAction: Search[Tim Burton]", "several actions"),
    ("Action: Search[Ed Wood] Lookup[born]", "several actions"),
    ("Action: Search[Ed Wood", "no closing bracket"),
    ("Action: Search Ed Wood", "not of the form"),
    ("Action: Search[" + "x" * 400 + "]", "longer than"),
    ("", "no action found"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_outputs_give_format_errors(text: str, message: str) -> None:
    result = parse_output(text).result
    assert isinstance(result, FormatError)
    assert message in result.message
    assert (
        "Search[title], Lookup[keyword] and Finish[answer]" in result.message or "longer" in message
    )


def test_require_thought() -> None:
    result = parse_output("Action: Search[x]", require_thought=True).result
    assert isinstance(result, FormatError) and "no thought" in result.message


def test_made_up_observation_is_cut() -> None:
    text = "Thought: t\nAction: Search[A]\nObservation 1: invented\nThought 2: more"
    assert cut_at_observation(text) == "Thought: t\nAction: Search[A]"
    assert cut_at_observation("no observation here ") == "no observation here"


def test_parse_action_alone() -> None:
    assert parse_action("Lookup[born]") == Action("Lookup", "born")
    assert isinstance(parse_action("Lookup born"), FormatError)


def test_arguments_are_never_evaluated() -> None:
    payload = "__import__('os').system('touch /tmp/wikireact-pwned')"
    assert parse_output(f"Action: Finish[{payload}]").result == Action("Finish", payload)


_ALPHABET = st.sampled_from(
    list("abcXYZ []()`'\"\n\r\t:0123456789.*_")
    + [
        "Action",
        "Action 2:",
        "Thought:",
        "Search[",
        "Lookup[",
        "Finish[",
        "Observation",
        "]",
        "[[",
        "\u202e",
        "\x00",
        "Serch",
        "»",
    ]
)


@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ALPHABET, max_size=40).map("".join) | st.text(max_size=300))
def test_parser_never_raises(text: str) -> None:
    parsed = parse_output(text)
    assert isinstance(parsed.result, Action | FormatError)
    # parse_output turns any exception into a catch-all error: seeing it means the parser raised
    if isinstance(parsed.result, FormatError):
        assert not parsed.result.message.startswith("could not read the output"), parsed.result
    if isinstance(parsed.result, Action):
        assert parsed.result.argument.strip()
        assert parsed.result.name in ("Search", "Lookup", "Finish")
        assert "\n" not in parsed.result.argument
