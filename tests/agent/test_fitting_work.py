"""Fitting a long episode's prompt costs each step little: no pass over every earlier step
until the prompt must be cut, and each observation is measured for clearing once.

Not timed (`bench/step_length.py` prints the figures): these count the work a step does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from support import MANY_PAGES, SpyModel, distinct_steps, thread

from wikireact import Context, MemorySource, build_graph
from wikireact.prompting import fitting
from wikireact.prompting.budget import ContextBudget
from wikireact.prompting.variants import PROMPT_VARIANTS

WIKI = MemorySource(MANY_PAGES)
WINDOW = 7000
"""Full from about step 230 of `distinct_steps`; clearing old observations is enough to step 300."""


class CountingModel(SpyModel):
    """A spy that also counts how often a prompt's tokens are counted (fitting and replying)."""

    counts: int = 0

    def count_prompt_tokens(self, messages: Sequence[BaseMessage]) -> int:
        """Count the prompt's tokens, counting the call."""
        self.counts += 1
        return super().count_prompt_tokens(messages)


def _run(spy: SpyModel, steps: int, **settings: Any) -> dict[str, Any]:
    graph = build_graph(InMemorySaver(), model=spy, wiki=WIKI)
    context = Context(max_steps=steps, repetition_limit=steps, **settings)
    return graph.invoke({"question": "Which topic comes first?"}, thread(), context=context)


def _count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    calls = [0]
    original = owner[name] if isinstance(owner, dict) else getattr(owner, name)

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return original(*args)

    if isinstance(owner, dict):
        monkeypatch.setitem(owner, name, counted)
    else:
        monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_prompt_that_fits_whole_is_built_and_counted_once_a_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    builds = _count_calls(monkeypatch, PROMPT_VARIANTS, "default")
    model = CountingModel(outputs=distinct_steps(60), context_window=1_000_000)
    out = _run(model, 60)
    assert out["status"] == "finished" and out["usage"][-1]["cleared"] == 0
    assert builds[0] == 60
    assert model.counts == 2 * 60  # one to fit, one as the model reports its usage


def test_without_a_known_window_no_observation_is_measured_for_clearing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    splits = _count_calls(monkeypatch, fitting, "split_sentences")
    out = _run(SpyModel(outputs=distinct_steps(40)), 40, model="scripted:steps.json")
    assert out["status"] == "finished"
    assert splits[0] == 0


def test_each_observation_is_measured_once_however_often_the_prompt_is_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    splits = _count_calls(monkeypatch, fitting, "split_sentences")
    out = _run(SpyModel(outputs=distinct_steps(120), context_window=1000, max_tokens=50), 120)
    assert out["status"] == "finished" and out["usage"][-1]["cleared"] > 0
    assert splits[0] <= 120  # at most once per distinct observation, not once per step and plan


def test_once_the_window_is_full_a_step_counts_its_prompt_a_few_times() -> None:
    model = CountingModel(outputs=distinct_steps(300), context_window=WINDOW, max_tokens=50)
    out = _run(model, 300)
    assert out["status"] == "finished"
    cleared = [u["cleared"] for u in out["usage"]]
    assert cleared[100] == 0 and cleared[-1] > 0
    assert model.counts <= 4 * 300  # the model's own, the whole prompt, the plan found, one less


@pytest.mark.parametrize("cleared_before", [0, 1, 7, 8, 9, 40, 57, 64, 200, 1000])
def test_a_search_from_the_previous_plan_finds_the_plan_a_search_from_scratch_finds(
    cleared_before: int,
) -> None:
    items, steps = 120, 125
    saved = [3 + (i * 7) % 11 for i in range(items)]  # what clearing each item frees

    def build(plan: fitting.Plan) -> list[BaseMessage]:
        tokens = 2000 - sum(saved[: plan.cleared]) - 40 * plan.trimmed - 5 * plan.dropped
        return [HumanMessage("x " * tokens)]

    for limit in (2001, 1990, 1700, 1234, 900, 700, 500):
        budget = ContextBudget(window=limit + 10, reply=10, count=lambda m: len(m[0].content) // 2)

        def fit(before: int, budget: ContextBudget = budget) -> fitting.Fitted:
            return fitting.fit_prompt(
                build, budget, items=items, extras=2, steps=steps, cleared_before=before
            )

        assert fit(cleared_before).plan == fit(0).plan
        assert fit(cleared_before).tokens == fit(0).tokens
