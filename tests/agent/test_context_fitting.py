"""Long episodes fit the model: the prompt is fitted to the context window, the state keeps everything."""

from __future__ import annotations

from itertools import pairwise

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from support import (
    GOOD_RUN,
    MANY_PAGES,
    PAGES,
    QUESTION,
    TOOLS_RUN,
    SpyModel,
    distinct_steps,
    thread,
)

from wikireact import Context, MemorySource, build_graph
from wikireact.models.scripted import ScriptOutput
from wikireact.prompting.fitting import clearable_steps, cleared_observation
from wikireact.state import Step

WIKI = MemorySource(MANY_PAGES)
WINDOW = 1000
REPLY = 50


def _long_run(steps: int, **settings: object) -> tuple[SpyModel, dict]:
    model = SpyModel(outputs=distinct_steps(steps), context_window=WINDOW, max_tokens=REPLY)
    graph = build_graph(InMemorySaver(), model=model, wiki=WIKI)
    out = graph.invoke(
        {"question": "Which topic comes first?"},
        thread(),
        context=Context(max_steps=steps, **settings),  # type: ignore[arg-type]
    )
    return model, {**graph.get_state(thread()).values, **out}


def test_a_1000_token_window_runs_300_steps_and_the_state_keeps_every_observation() -> None:
    model, values = _long_run(300)
    assert values["status"] == "finished" and values["steps"] == 300
    received = [model.count_prompt_tokens(messages) for messages in model.calls]
    assert len(received) == 300
    assert max(received) <= WINDOW - REPLY  # what the model received, every step
    assert [u["input_tokens"] for u in values["usage"]] == received  # reported = received
    observations = [s["observation"] for s in values["trajectory"][:-1]]
    assert len(observations) == 299 and all(observations)
    assert not any(o.startswith("[cleared") for o in observations)  # the state is untouched
    assert values["usage"][0]["cleared"] == 0 and values["usage"][-1]["cleared"] > 0
    assert values["audit"][-1]["cleared"] == values["usage"][-1]["cleared"]
    for messages in model.calls:
        text = "\n".join(str(m.content) for m in messages)
        assert "Question: Which topic comes first?" in text  # the question is never dropped
    last_prompt = "\n".join(str(m.content) for m in model.calls[-1])
    assert values["trajectory"][-2]["observation"] in last_prompt  # nor the latest observation


def _search_episode(
    titles: list[str], window: int, wiki: MemorySource
) -> tuple[SpyModel, dict, list[str]]:
    """Run one Search a step over `titles`, then Finish; return the model, the state and its prompts."""
    script: list[ScriptOutput] = [
        f"Thought: t{k}.\nAction: Search[{title}]" for k, title in enumerate(titles)
    ]
    model = SpyModel(
        outputs=[*script, "Thought: done.\nAction: Finish[x]"],
        context_window=window,
        max_tokens=REPLY,
    )
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    out = graph.invoke(
        {"question": "Which page?"},
        thread(),
        context=Context(max_steps=len(titles) + 1, repetition_limit=1000),
    )
    texts = ["\n".join(str(m.content) for m in call) for call in model.calls]
    return model, {**graph.get_state(thread()).values, **out}, texts


def test_once_the_window_is_full_most_prompts_extend_the_previous_one() -> None:
    # clearing one more observation every step would change the prompt near its start, and a
    # model server (llama.cpp, a provider's prompt cache) would read all of it again each step
    pages = {
        f"Page {i}": " ".join(f"Fact {j} of page {i}: {'word ' * 40}." for j in range(5))
        for i in range(60)
    }
    model, values, texts = _search_episode(
        [f"Page {k}" for k in range(59)], 3000, MemorySource(pages)
    )
    cleared = [u["cleared"] for u in values["usage"]]
    full = cleared.index(next(c for c in cleared if c))
    extends = [b.startswith(a) for a, b in pairwise(texts[full:])]
    assert len(extends) > 30 and sum(extends) >= len(extends) / 2  # clearing one a step: none
    assert max(model.count_prompt_tokens(m) for m in model.calls) <= 3000 - REPLY


def test_an_observation_not_twice_its_placeholder_is_never_cleared() -> None:
    # search misses are about as long as the line that would replace them: clearing them frees
    # little, so the oldest steps are dropped instead (in blocks: most prompts still extend)
    model, values, texts = _search_episode(
        [f"Nowhere {k}" for k in range(119)], 1000, MemorySource(PAGES)
    )
    assert values["status"] == "finished"
    assert not any("[cleared to fit the context: Search[Nowhere" in text for text in texts)
    assert "cleared to fit the context; the steps below" in texts[-1]  # older steps dropped
    assert max(model.count_prompt_tokens(m) for m in model.calls) <= 1000 - REPLY
    extends = [b.startswith(a) for a, b in pairwise(texts)]
    assert sum(extends) >= 0.75 * len(extends)


def test_a_search_miss_with_similar_titles_is_kept_and_a_page_is_cleared() -> None:
    def step(observation: str) -> Step:
        return Step(
            kind="executed", thought="", action="Search[X]", observation=observation, raw=""
        )

    placeholder = len(cleared_observation(step("One sentence.")))
    miss = step("Could not find X. Similar: " + "y" * placeholder)  # 1.3x its placeholder
    page = step("A sentence of the page. " * (placeholder // 8))  # 3x
    assert clearable_steps([miss, page]) == [1]


def test_older_observations_become_placeholders_and_the_latest_three_stay_whole() -> None:
    model, values = _long_run(20)
    history = values["trajectory"]
    prompt = "\n".join(str(m.content) for m in model.calls[-1])
    assert history[-4]["observation"] in prompt and history[-2]["observation"] in prompt
    assert 0 < values["usage"][-1]["cleared"] == prompt.count("[cleared to fit the context")
    first = history[0]
    assert first["action"] == "Search[Page 0]"
    assert cleared_observation(first) in prompt
    assert cleared_observation(first).startswith(
        "[cleared to fit the context: Search[Page 0], 5 sentences; Search it again to reread]"
    )
    assert all(f"Action {n}: {s['action']}" in prompt for n, s in enumerate(history[:-1], 1))


def test_keep_observations_sets_how_many_latest_observations_stay_whole() -> None:
    model, values = _long_run(20, keep_observations=1)
    prompt = "\n".join(str(m.content) for m in model.calls[-1])
    searches = [s for s in values["trajectory"] if s["action"].startswith("Search[")]
    assert searches[-2]["observation"] not in prompt  # only the latest clearable one stays
    assert values["trajectory"][-2]["observation"] in prompt


def test_without_a_known_window_the_prompt_is_sent_whole() -> None:
    model = SpyModel(outputs=GOOD_RUN)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    out = graph.invoke({"question": QUESTION}, thread())
    assert out["answer"] == "yes" and out["usage"][-1]["cleared"] == 0


def test_the_tools_protocol_is_fitted_too() -> None:
    model = SpyModel(outputs=TOOLS_RUN, context_window=650, max_tokens=REPLY)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    out = graph.invoke(
        {"question": QUESTION}, thread(), context=Context(protocol="tools", keep_observations=1)
    )
    assert out["status"] == "finished"
    assert max(model.count_prompt_tokens(m) for m in model.calls) <= 650 - REPLY
    assert any(u.get("cleared") for u in out["usage"])


def test_a_prompt_that_cannot_fit_ends_context_exhausted_and_a_larger_window_continues() -> None:
    model = SpyModel(outputs=GOOD_RUN, context_window=600, max_tokens=REPLY)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    out = graph.invoke({"question": QUESTION}, thread(), context=Context(context_tokens=150))
    values = graph.get_state(thread()).values
    assert out["status"] == "context_exhausted" and out["steps"] == 0
    assert "150 tokens" in values["stop_reason"]
    again = graph.invoke(None, thread(), context={"context_tokens": 600})
    assert again["status"] == "finished" and again["answer"] == "yes"


def test_a_model_that_refuses_the_prompt_as_too_long_ends_context_exhausted() -> None:
    # the window the run is told is larger than the model's own: llama.cpp's error comes back
    model = SpyModel(outputs=GOOD_RUN, context_window=680, max_tokens=REPLY)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    out = graph.invoke({"question": QUESTION}, thread(), context=Context(context_tokens=100_000))
    assert out["status"] == "context_exhausted" and 0 < out["steps"] < 4
    assert graph.invoke(None, thread(), context={"context_tokens": 680})["answer"] == "yes"


@pytest.mark.parametrize(
    ("setting", "limit", "steps"),
    [("max_model_calls", 2, 2), ("max_input_tokens", 1100, 2), ("max_output_tokens", 15, 2)],
)
def test_each_budget_ends_the_episode_budget_exhausted_with_its_reason(
    setting: str, limit: int, steps: int
) -> None:
    model = SpyModel(outputs=GOOD_RUN)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    out = graph.invoke({"question": QUESTION}, thread(), context=Context(**{setting: limit}))  # type: ignore[arg-type]
    values = graph.get_state(thread()).values
    assert out["status"] == "budget_exhausted" and out["steps"] == steps
    assert setting in values["stop_reason"]
    assert graph.invoke(None, thread(), context={setting: 0})["answer"] == "yes"


def test_the_paper_settings_set_no_token_budget() -> None:
    context = Context()
    assert context.max_steps == 7
    assert (context.max_model_calls, context.max_input_tokens, context.max_output_tokens) == (
        0,
        0,
        0,
    )


def test_each_step_records_the_wall_time_of_its_model_and_wikipedia_calls() -> None:
    model = SpyModel(outputs=GOOD_RUN, delay_s=0.01)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    out = graph.invoke({"question": QUESTION}, thread())
    assert all(a["model_seconds"] > 0 for a in out["audit"])
    assert (
        all(a["wiki_seconds"] >= 0 for a in out["audit"]) and out["audit"][-1]["wiki_seconds"] == 0
    )
