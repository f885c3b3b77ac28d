"""A long episode's prompt reuses what earlier steps built and counted, fitted or not.

Not timed (`bench/step_length.py` prints CPU per step by length): these count the work,
message by message and step by step, and check that what is reused is what a build or
count from scratch gives.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.memory import InMemorySaver
from support import MANY_PAGES, SpyModel, distinct_steps, thread

from wikireact import Context, MemorySource, build_graph
from wikireact.models.context_window import APPROXIMATE_TOKENS
from wikireact.prompting import fitting, react
from wikireact.prompting.counting import MessageCounts
from wikireact.prompting.recent_lists import PIECE, KeptList, RecentLists
from wikireact.prompting.turns import EpisodeTurns
from wikireact.state import Step


def _step(k: int, observation: str | None = None) -> Step:
    text = observation if observation is not None else " ".join(f"word{k}-{j}." for j in range(40))
    return Step(kind="executed", thought=f"t{k}", action=f"Search[P{k}]", observation=text, raw="")


def _counting(calls: list[BaseMessage]) -> MessageCounts:
    def count_one(message: BaseMessage) -> int:
        calls.append(message)
        return len(str(message.content).split())

    return MessageCounts(count_one)


def test_a_prompt_counts_as_the_sum_of_its_messages_each_message_counted_once() -> None:
    calls: list[BaseMessage] = []
    counts = _counting(calls)
    prompt = [SystemMessage("a b c"), HumanMessage("d e"), AIMessage("f")]
    assert counts(prompt) == 6 and len(calls) == 3
    longer = [*prompt, HumanMessage("g h i j")]
    assert counts(longer) == 10 and len(calls) == 4  # only the new message is counted
    assert counts([longer[3], longer[0]]) == 7 and len(calls) == 4  # any order, any subset
    assert counts([HumanMessage("a b c")]) == 3 and len(calls) == 5  # an equal new object: counted


def test_messages_forgotten_past_the_capacity_are_counted_again_the_same() -> None:
    counts = MessageCounts(lambda m: len(str(m.content)), capacity=10)
    messages = [HumanMessage("x" * k) for k in range(30)]
    for k in range(30):
        assert counts(messages[: k + 1]) == sum(range(k + 1))
    assert counts([messages[0]]) == 0
    assert counts(list(reversed(messages))) == sum(range(30))


def test_the_approximate_count_is_langchains_count_of_the_whole_prompt() -> None:
    prompt = [
        SystemMessage("You answer questions."),
        HumanMessage("Question: who?"),
        AIMessage("", tool_calls=[{"name": "search", "args": {"title": "Ed Wood"}, "id": "c1"}]),
        ToolMessage("Ed Wood was a film maker.", tool_call_id="c1"),
        AIMessage("Thought 1: x\nAction 1: Finish[Ed]", name="agent"),
    ]
    assert APPROXIMATE_TOKENS(prompt) == count_tokens_approximately(prompt)
    assert APPROXIMATE_TOKENS(prompt[:3]) + APPROXIMATE_TOKENS(prompt[3:]) == (
        count_tokens_approximately(prompt)
    )


def _turns_counted(episode: EpisodeTurns, steps: Sequence[Step], built: list[int]) -> list[str]:
    def step_turns(number: int, step: Step) -> list[BaseMessage]:
        built.append(number)
        return [AIMessage(f"{number}: {step['action']}"), HumanMessage(step["observation"])]

    return [str(m.content) for m in episode.turns("key", steps, step_turns)]


def test_a_history_differing_from_a_kept_one_in_some_steps_builds_only_those() -> None:
    episode, built = EpisodeTurns(), list[int]()
    steps = [_step(k) for k in range(10)]
    whole = _turns_counted(episode, steps, built)
    assert built == list(range(1, 11))
    changed = [*steps[:6], _step(6, "other"), *steps[7:]]  # a fitted prompt: one step cleared
    built.clear()
    assert _turns_counted(episode, changed, built) == _turns_counted(EpisodeTurns(), changed, [])
    assert built == [7]  # the steps after it are the same steps at the same place
    built.clear()
    assert _turns_counted(episode, [*steps, _step(10)], built)[:20] == whole
    assert built == [11]  # both histories are kept: the first one is extended
    more = [*steps[:2], _step(2, "other"), *steps[3:], _step(10), _step(11)]  # an equal step 11
    built.clear()
    assert _turns_counted(episode, more, built) == _turns_counted(EpisodeTurns(), more, [])
    assert built == [3, 12]  # from the kept history it differs from least (not `changed`)


@pytest.mark.parametrize("length", [5, PIECE, 3 * PIECE + 7])
def test_a_list_starts_with_the_same_or_equal_items_and_nothing_else(length: int) -> None:
    steps = [_step(k) for k in range(length)]
    for kept in (KeptList(steps), KeptList(steps[:3]).plus(steps[3:])):
        assert list(kept) == steps and len(kept) == length
        assert kept.starts([*steps, _step(length)])
        assert kept.starts(tuple(steps))
        assert kept.starts([_step(k) for k in range(length)])  # equal steps: a resumed run's
        assert not kept.starts(steps[:-1])
        edited = [*steps[:-3], _step(length - 3, "edited"), *steps[-2:]]
        assert not kept.starts(edited)


def test_keeping_a_list_that_extends_a_kept_one_costs_its_new_items_not_its_length() -> None:
    """Each step keeps its prompt and history to recognise the next; a whole copy a step of a
    4,800-step episode's lists cost copying, freeing and garbage-collecting them every step."""
    recent: RecentLists[int, int] = RecentLists(4)
    items = list(range(50_000))
    assert recent.value(items, 0, lambda known, done: known + len(items) - done) == 50_000
    longer = [*items, 7, 8]
    tracemalloc.start()
    try:
        assert recent.value(longer, 0, lambda known, done: known + len(longer) - done) == 50_002
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40_000  # a copy of `longer` alone: 400,016 bytes
    assert recent.value([*items[:9_000], -1, *items[9_001:]], 0, lambda known, done: -done) == 0
    assert recent.value(tuple(longer), 0, lambda known, done: -1) == 50_002


class _Equal:
    """An item equal to any other by value, counting the comparisons that needed `__eq__`."""

    compared = 0

    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        _Equal.compared += 1
        return isinstance(other, _Equal) and other.value == self.value

    __hash__ = None  # type: ignore[assignment]


def test_a_list_matched_by_value_is_kept_as_its_own_objects() -> None:
    """A resumed run's rebuilt steps and messages equal the kept ones without being them: once
    matched by value, the next step's list is recognised by identity again, not by value."""
    recent: RecentLists[_Equal, int] = RecentLists(4)
    recent.value([_Equal(k) for k in range(1_000)], 0, lambda known, done: 1)
    rebuilt = [_Equal(k) for k in range(1_001)]
    assert recent.value(rebuilt, 0, lambda known, done: known + 1) == 2
    _Equal.compared = 0
    assert recent.value([*rebuilt, _Equal(5)], 0, lambda known, done: known + 1) == 3
    assert _Equal.compared == 0


def test_a_step_is_cleared_to_the_same_object_each_time() -> None:
    history = [_step(k) for k in range(12)]
    plan = fitting.Plan(cleared=5)
    first, again = fitting.fitted_history(history, plan), fitting.fitted_history(history, plan)
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert first[0] is not history[0] and first[0]["observation"].startswith("[cleared")
    assert first[5] is history[5]
    dropped = fitting.Plan(cleared=5, dropped=3)
    assert (
        fitting.fitted_history(history, dropped)[0] is fitting.fitted_history(history, dropped)[0]
    )


def test_the_clearable_steps_of_a_longer_history_are_looked_at_from_where_it_grew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looked: list[str] = []
    clearable = fitting._clearable

    def counted(action: str, observation: str) -> bool:
        looked.append(action)
        return clearable(action, observation)

    monkeypatch.setattr(fitting, "_clearable", counted)
    history = [_step(k, "short." if k % 3 == 0 else None) for k in range(40)]
    assert fitting.clearable_steps(history[:30]) == [k for k in range(30) if k % 3]
    looked.clear()
    assert fitting.clearable_steps(history) == [k for k in range(40) if k % 3]
    assert looked == [f"Search[P{k}]" for k in range(30, 40)]
    edited = [*history[:10], _step(10, "short."), *history[11:]]  # another history: looked at whole
    assert fitting.clearable_steps(edited) == [k for k in range(40) if k % 3 and k != 10]


def _run(spy: SpyModel, steps: int, **settings: Any) -> dict[str, Any]:
    graph = build_graph(InMemorySaver(), model=spy, wiki=MemorySource(MANY_PAGES))
    context = Context(max_steps=steps, repetition_limit=steps, **settings)
    return graph.invoke({"question": "Which topic comes first?"}, thread(), context=context)


def test_once_the_window_is_full_each_steps_turns_are_built_about_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = [0]
    step_turns = react._step_turns

    def counted(*args: Any) -> Any:
        built[0] += 1
        return step_turns(*args)

    monkeypatch.setattr(react, "_step_turns", counted)
    steps = 300
    model = SpyModel(outputs=distinct_steps(steps), context_window=7000, max_tokens=50)
    out = _run(model, steps)
    cleared = [u["cleared"] for u in out["usage"]]
    assert out["status"] == "finished" and cleared[100] == 0 and cleared[-1] > 0
    # Each step's turns are built once for the whole prompt, and a fitted prompt's again
    # only for the steps its plan changes (784 builds here); not from its first changed step
    # on (1,814), nor every fitted prompt (three a step) from its first step (40,814).
    assert built[0] <= 3 * steps


def test_a_prompt_counted_again_is_not_kept_twice() -> None:
    counts = _counting([])
    prompt: list[BaseMessage] = [HumanMessage(f"m{k}") for k in range(6)]
    assert counts(prompt) == counts(list(prompt)) == 6
    kept = list(counts._recent._recent)
    assert len(kept) == 1 and kept[0][0] is not prompt  # one copy, not one a count
