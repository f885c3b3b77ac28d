"""FEVER through the same graph: a claim in, one of three labels out, every other form normalised."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.base import BaseCheckpointSaver
from support import CLAIM, FEVER_PAGES, FEVER_RUN, SpyModel, thread

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import ConfigurationError
from wikireact.models.scripted import ScriptOutput
from wikireact.protocols.labels import label_error, normalize_label

SEARCH = "Thought 1: I search him.\nAction 1: Search[Nikolaj Coster-Waldau]"


def run(outputs: list[ScriptOutput], **context: Any) -> dict[str, Any]:
    graph = build_graph(model=ScriptedChatModel(outputs=outputs), wiki=MemorySource(FEVER_PAGES))
    return dict(graph.invoke({"question": CLAIM}, context=Context(task="fever", **context)))


@pytest.mark.parametrize(
    ("written", "label"),
    [
        ("SUPPORTS", "SUPPORTS"),
        ("supports", "SUPPORTS"),
        ("Supported", "SUPPORTS"),
        ("REFUTES", "REFUTES"),
        ("refuted.", "REFUTES"),
        ("NOT ENOUGH INFORMATION", "NOT ENOUGH INFO"),
        ("not enough info.", "NOT ENOUGH INFO"),
        ('"Not Enough Info"', "NOT ENOUGH INFO"),
        ("NOT_ENOUGH_INFO", "NOT ENOUGH INFO"),
    ],
)
def test_a_finish_in_any_form_of_a_label_ends_with_the_label(written: str, label: str) -> None:
    out = run([SEARCH, f"Thought 2: done.\nAction 2: Finish[{written}]"])
    assert (out["status"], out["answer"], out["steps"]) == ("finished", label, 2)
    assert out["trajectory"][-1]["action"] == f"Finish[{label}]"
    assert out["audit"][-1]["action"] == {"verb": "Finish", "arguments": {"answer": label}}


@pytest.mark.parametrize("written", ["true", "yes", "Fox", "SUPPORTS REFUTES", "not enough"])
def test_anything_else_is_an_invalid_step_naming_the_labels_and_the_episode_goes_on(
    written: str,
) -> None:
    out = run([SEARCH, f"Thought 2: hm.\nAction 2: Finish[{written}]", *FEVER_RUN[1:]])
    invalid = out["trajectory"][1]
    assert invalid["kind"] == "invalid"
    assert invalid["action"] == f"Finish[{written}]"
    observation = invalid["observation"]
    assert observation.startswith(f"Invalid action: `{written}` is not a label.")
    for label in ("Finish[SUPPORTS]", "Finish[REFUTES]", "Finish[NOT ENOUGH INFO]"):
        assert label in observation
    assert (out["status"], out["answer"], out["steps"]) == ("finished", "SUPPORTS", 3)


def test_a_near_miss_gets_a_did_you_mean() -> None:
    out = run([SEARCH, "Thought 2: x.\nAction 2: Finish[REFUTE IT]", *FEVER_RUN[1:]])
    assert "Did you mean REFUTES?" in out["trajectory"][1]["observation"]


def test_hotpotqa_answers_are_left_as_written() -> None:
    graph = build_graph(
        model=ScriptedChatModel(outputs=["Thought: x.\nAction: Finish[supported]"]),
        wiki=MemorySource(FEVER_PAGES),
    )
    out = graph.invoke({"question": CLAIM}, context=Context(task="hotpotqa"))
    assert out["answer"] == "supported"


def test_the_model_sees_the_claim_the_fever_instruction_and_label_exemplars() -> None:
    spy = SpyModel(outputs=FEVER_RUN)
    graph = build_graph(model=spy, wiki=MemorySource(FEVER_PAGES))
    graph.invoke({"question": CLAIM}, context=Context(task="fever"))
    prompt = spy.prompts[0]
    assert "You check a claim against Wikipedia" in prompt
    assert "Finish[label]: gives the verdict, exactly one of SUPPORTS, REFUTES or NOT ENOUGH" in (
        prompt
    )
    for label in ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"):
        assert f"Finish[{label}]" in prompt
    assert f"Claim: {CLAIM}" in prompt
    assert "Question:" not in prompt
    assert "Finish[yes]" not in prompt  # no HotpotQA exemplar


def test_the_tools_protocol_binds_a_finish_that_takes_a_label() -> None:
    spy = SpyModel(
        outputs=[
            {"tool": "search", "args": {"title": "Stranger Things"}, "content": "Search it."},
            {"tool": "finish", "args": {"answer": "Refuted"}, "content": "Hawkins, not there."},
        ]
    )
    graph = build_graph(model=spy, wiki=MemorySource(FEVER_PAGES))
    out = graph.invoke(
        {"question": "Stranger Things is set in Bloomington, Indiana."},
        context=Context(task="fever", protocol="tools"),
    )
    assert (out["status"], out["answer"]) == ("finished", "REFUTES")
    finish = next(t for t in spy.tools[0] if t["function"]["name"] == "finish")
    assert finish["function"]["parameters"]["properties"]["answer"]["enum"] == [
        "SUPPORTS",
        "REFUTES",
        "NOT ENOUGH INFO",
    ]
    assert "Claim: Stranger Things" in spy.prompts[0]


def test_the_task_is_kept_with_the_thread_and_cannot_change(
    checkpointer: BaseCheckpointSaver,
) -> None:
    graph = build_graph(
        checkpointer,
        model=ScriptedChatModel(outputs=FEVER_RUN),
        wiki=MemorySource(FEVER_PAGES),
        interrupt_before=["act"],
    )
    graph.invoke({"question": CLAIM}, thread("fever"), context=Context(task="fever"))
    assert graph.get_state(thread("fever")).values["context"]["task"] == "fever"
    with pytest.raises(ConfigurationError, match="task cannot change during an episode"):
        graph.invoke(None, thread("fever"), context={"task": "hotpotqa"})
    out = graph.invoke(None, thread("fever"))  # resumed without a context: still FEVER
    assert (out["status"], out["answer"]) == ("finished", "SUPPORTS")


def test_an_unknown_task_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="task must be hotpotqa or fever, got 'squad'"):
        Context(task="squad")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="task must be hotpotqa or fever"):
        Context.read({"task": "squad"})


def test_labels_normalise_only_forms_that_mean_one_label() -> None:
    assert normalize_label(" Not enough information. ") == "NOT ENOUGH INFO"
    assert normalize_label("nei") == "NOT ENOUGH INFO"
    assert [normalize_label(x) for x in ("", "true", "support or refute", None)] == [None] * 4


def test_a_reviewers_edited_finish_is_checked_like_the_models() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    graph = build_graph(
        InMemorySaver(),
        model=ScriptedChatModel(
            outputs=[SEARCH, "Thought 2: other.\nAction 2: Search[Stranger Things]"]
        ),
        wiki=MemorySource(FEVER_PAGES),
    )
    context = Context(task="fever", approve=True)
    graph.invoke({"question": CLAIM}, thread("edit"), context=context)
    out = graph.invoke(Command(resume={"action": "Finish[true]"}), thread("edit"), context=context)
    step = out["trajectory"][0]
    assert (step["kind"], step["action"]) == ("invalid", "Finish[true]")
    assert "is not a label" in step["observation"] and out["status"] == "running"
    out = graph.invoke(
        Command(resume={"action": "Finish[refuted]"}), thread("edit"), context=context
    )
    assert (out["status"], out["answer"]) == ("finished", "REFUTES")
    assert out["trajectory"][-1]["action"] == "Finish[REFUTES]"


DENIALS = ["not supported", "unsupported", "does not support", "not refuted", "irrefutable"]
"""Verdicts written as a denied label: each may mean either of the two other labels."""


def _finish(protocol: str, written: str) -> ScriptOutput:
    if protocol == "tools":
        return {"tool": "finish", "args": {"answer": written}, "content": "Done."}
    return f"Thought 2: done.\nAction 2: Finish[{written}]"


@pytest.mark.parametrize("protocol", ["text", "tools"])
@pytest.mark.parametrize("written", DENIALS)
def test_a_denied_label_gets_no_hint_that_would_flip_the_verdict(
    protocol: str, written: str
) -> None:
    search: ScriptOutput = SEARCH
    if protocol == "tools":
        search = {"tool": "search", "args": {"title": "Nikolaj Coster-Waldau"}, "content": "Go."}
    script = [search, _finish(protocol, written), _finish(protocol, "supported")]
    out = run(script, protocol=protocol)
    invalid = out["trajectory"][1]
    assert (invalid["kind"], invalid["action"]) == ("invalid", f"Finish[{written}]")
    assert "Did you mean" not in invalid["observation"]
    for label in ("Finish[SUPPORTS]", "Finish[REFUTES]", "Finish[NOT ENOUGH INFO]"):
        assert label in invalid["observation"]
    assert (out["status"], out["answer"]) == ("finished", "SUPPORTS")  # the next step's own label


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("SUPORTS", "SUPPORTS"),
        ("REFUTE IT", "REFUTES"),
        ("refutted", "REFUTES"),
        ("not enough", "NOT ENOUGH INFO"),
        ("Not Enought Info", "NOT ENOUGH INFO"),
        ("not supported", None),
        ("Unsupported", None),
        ("does not support", None),
        ("doesn't support", None),
        ("NOT SUPPORTS", None),
        ("non-supported", None),
        ("not refuted", None),
        ("unrefuted", None),
        ("irrefutable", None),
        ("refutable", None),
        ("supportable", None),
        ("never refuted", None),
        ("supports? no", None),
        ("SUPPORTS REFUTES", None),
        ("supports or refutes", None),
        ("true", None),
        ("false", None),
        ("yes", None),
        ("", None),
    ],
)
def test_the_did_you_mean_names_a_label_only_for_a_slip_of_the_pen(
    written: str, hint: str | None
) -> None:
    assert hint_in(label_error(written)) == hint


def hint_in(message: str) -> str | None:
    """Return the label a did-you-mean names in `message`, if any."""
    found = re.search(r"Did you mean ([A-Z ]+)\?", message)
    return found.group(1) if found else None


_VERDICT_FORMS = ["supports", "supported", "refutes", "refuted"]
_LABEL_FORMS = st.sampled_from([*_VERDICT_FORMS, "not enough info", "not enough information"])
_DENY = st.sampled_from(["not {}", "does not {}", "{} - not", "no, {}", "never {}"])


def _misspelt(form: str, cut: int) -> str:
    """Return `form` without one of its letters (chosen by `cut`)."""
    position = cut % len(form)
    return form[:position] + form[position + 1 :]


@given(form=_LABEL_FORMS, denial=_DENY, cut=st.integers(min_value=0, max_value=30))
def test_a_denied_label_never_gets_a_hint_even_misspelt(form: str, denial: str, cut: int) -> None:
    assert hint_in(label_error(denial.format(form))) is None
    assert hint_in(label_error(denial.format(_misspelt(form, cut)))) is None


@given(
    form=st.sampled_from(_VERDICT_FORMS),
    prefix=st.sampled_from(["un", "ir", "in", "non-", "dis"]),
    cut=st.integers(min_value=0, max_value=30),
)
def test_a_verdict_with_a_negating_prefix_never_gets_a_hint(
    form: str, prefix: str, cut: int
) -> None:
    assert hint_in(label_error(prefix + form)) is None
    assert hint_in(label_error(prefix + _misspelt(form, cut))) is None


@given(form=_LABEL_FORMS, cut=st.integers(min_value=0, max_value=30))
def test_a_misspelt_label_is_never_hinted_as_another(form: str, cut: int) -> None:
    assert hint_in(label_error(_misspelt(form, cut))) in (None, normalize_label(form))
