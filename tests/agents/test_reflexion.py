"""Reflexion: whole runs through its graph with scripted models (trials, evaluator, lessons)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from reflexion_scripts import LESSON, RIGHT_RUN, WANDER, WRONG_GUESS, human_texts, lesson_turn
from support import PAGES, QUESTION, TOOLS_RUN, SpyModel, thread

from wikireact import MemorySource
from wikireact.agents import AGENTS
from wikireact.agents.reflexion.graph import build_graph
from wikireact.errors import ConfigurationError


def run(model: SpyModel, inputs: dict[str, Any], **context: Any) -> dict[str, Any]:
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    return dict(graph.invoke({"question": QUESTION, **inputs}, thread("r"), context=context))


def test_reflexion_is_registered() -> None:
    assert AGENTS["reflexion"] == "wikireact.agents.reflexion.graph"


def test_wrong_first_trial_then_right_second_trial_shown_the_lesson() -> None:
    model = SpyModel(outputs=[WRONG_GUESS, LESSON, *RIGHT_RUN])
    out = run(model, {"gold_answer": "yes", "memory": "off"})

    assert (out["answer"], out["status"]) == ("yes", "finished")
    first, second = out["trials"]
    assert (first["answer"], first["verdict"], first["reflection"]) == ("no", "wrong", LESSON)
    assert (second["answer"], second["verdict"], second["reflection"]) == ("yes", "correct", None)
    assert first["lessons"] == [] and second["lessons"] == [LESSON]
    assert [s["action"] for s in second["trajectory"]][-1] == "Finish[yes]"
    # the prompts: trial 1 saw no lesson, the reflection saw trial 1 (not the gold answer),
    # and every step of trial 2 saw the lesson right before the question
    assert lesson_turn(model.calls[0]) is None
    reflection_prompt = "\n".join(human_texts(model.calls[1]))
    assert "Finish[no]" in reflection_prompt and "judged incorrect" in reflection_prompt
    assert "yes" not in reflection_prompt.split("Outcome:")[1]
    for call in model.calls[2:]:
        shown = lesson_turn(call)
        assert shown is not None and LESSON in shown
    # totals: 4 steps, 5 model calls (4 steps + 1 reflection), every step tagged with its trial
    assert out["steps"] == 4 and out["model_calls"] == 5 == len(out["usage"]) == len(model.calls)
    assert [s["trial"] for s in out["trajectory"]] == [1, 2, 2, 2]
    assert [u["call"] for u in out["usage"]] == ["step", "reflection", "step", "step", "step"]
    assert [(r["trial"], r["step"]) for r in out["audit"]] == [(1, 1), (2, 1), (2, 2), (2, 3)]
    assert all(r["ended_at"] for r in out["audit"] if r["kind"] == "executed")


def test_max_trials_is_respected_and_the_last_answer_stands() -> None:
    model = SpyModel(outputs=[WRONG_GUESS, LESSON, WRONG_GUESS, LESSON, *RIGHT_RUN])
    out = run(model, {"gold_answer": "yes", "memory": "off", "max_trials": 2})

    assert [t["verdict"] for t in out["trials"]] == ["wrong", "wrong"]
    assert (out["answer"], out["status"]) == ("no", "finished")
    # no reflection after the last trial when no run will read it (memory off)
    assert out["trials"][1]["reflection"] is None
    assert out["model_calls"] == 3 == len(model.calls)


def test_three_trials_by_default() -> None:
    model = SpyModel(outputs=[WRONG_GUESS, LESSON, WRONG_GUESS, "Lesson two.", WRONG_GUESS])
    out = run(model, {"gold_answer": "yes", "memory": "off"})
    assert len(out["trials"]) == 3 and out["trials"][2]["lessons"] == [LESSON, "Lesson two."]
    assert out["model_calls"] == 5


def test_without_gold_a_trial_without_finish_fails_and_the_next_one_answers() -> None:
    model = SpyModel(outputs=[WANDER, LESSON, "Thought 1: American.\nAction 1: Finish[yes]"])
    out = run(model, {"memory": "off"}, max_steps=1)

    first, second = out["trials"]
    assert (first["status"], first["verdict"]) == ("budget_exhausted", "no_answer")
    assert "step budget" in "\n".join(human_texts(model.calls[1]))
    assert (second["verdict"], out["answer"], out["status"]) == ("accepted", "yes", "finished")


def test_without_gold_a_finished_trial_is_accepted_without_a_check_by_default() -> None:
    model = SpyModel(outputs=[WRONG_GUESS])
    out = run(model, {"memory": "off"})
    assert [t["verdict"] for t in out["trials"]] == ["accepted"]
    assert out["model_calls"] == 1 == len(model.calls)


def test_self_check_rejects_then_accepts() -> None:
    model = SpyModel(
        outputs=[
            WRONG_GUESS,
            "Verdict: INCORRECT\nNothing was searched.",
            LESSON,
            *RIGHT_RUN,
            "Verdict: CORRECT\nBoth pages say American.",
        ]
    )
    out = run(model, {"memory": "off", "self_check": True})

    first, second = out["trials"]
    assert (first["verdict"], second["verdict"]) == ("rejected", "accepted")
    assert "Nothing was searched" in first["judged"]
    assert "Proposed answer: no" in "\n".join(human_texts(model.calls[1]))
    assert out["answer"] == "yes" and out["model_calls"] == 7 == len(model.calls)
    assert [u["call"] for u in out["usage"]].count("self_check") == 2


def test_tools_protocol_trials_show_the_lesson() -> None:
    guess = {"tool": "finish", "args": {"answer": "no"}, "content": "A guess."}
    model = SpyModel(outputs=[guess, LESSON, *TOOLS_RUN])
    out = run(model, {"gold_answer": "yes", "memory": "off"}, protocol="tools")
    assert [t["verdict"] for t in out["trials"]] == ["wrong", "correct"]
    assert lesson_turn(model.calls[0]) is None
    shown = lesson_turn(model.calls[2])
    assert shown is not None and LESSON in shown


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"max_trials": 0}, "max_trials must be from 1 to 20"),
        ({"memory": "always"}, "memory must be off or question"),
        ({"memory": "question"}, "memory=question needs a long-term store"),
    ],
)
def test_bad_settings_are_one_line_errors(inputs: dict[str, Any], message: str) -> None:
    model = SpyModel(outputs=[WRONG_GUESS])
    with pytest.raises(ConfigurationError, match=message):
        run(model, inputs)
    assert model.calls == []


def test_trial_steps_stream_as_subgraph_events() -> None:
    model = SpyModel(outputs=[WRONG_GUESS, LESSON, *RIGHT_RUN])
    graph = build_graph(model=model, wiki=MemorySource(PAGES))
    inputs = {"question": QUESTION, "gold_answer": "yes", "memory": "off"}
    seen = [
        (namespace[0].split(":")[0] if namespace else "", next(iter(update)))
        for namespace, update in graph.stream(inputs, stream_mode="updates", subgraphs=True)
    ]
    assert seen.count(("trial", "reason")) == 4 and seen.count(("trial", "act")) == 2
    assert [node for space, node in seen if not space] == [
        *("recall", "trial", "evaluate", "reflect", "record"),
        *("trial", "evaluate", "record"),
    ]
