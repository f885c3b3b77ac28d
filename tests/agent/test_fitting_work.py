"""Fitting a long episode's prompt costs each step little: no pass over every earlier step
until the prompt must be cut, and each observation is measured for clearing once.

Not timed (`bench/step_length.py` prints the figures): these count the work a step does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from support import MANY_PAGES, SpyModel, distinct_steps, thread

from wikireact import Context, MemorySource, build_graph
from wikireact.prompting import fitting
from wikireact.prompting.variants import PROMPT_VARIANTS

WIKI = MemorySource(MANY_PAGES)


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
