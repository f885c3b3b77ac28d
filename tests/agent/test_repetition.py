"""The repetition rule through whole episodes: a repeat is an action that cannot make progress.

A step is a repeat when the same action is proposed in the same environment state (open
page, lookup cursor) as an earlier step; it is not executed and points to that step.
"""

from __future__ import annotations

from typing import Any

import pytest
from support import thread

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.errors import WikiOutageError, WikiUnavailableError
from wikireact.models.scripted import ScriptOutput
from wikireact.state import StepKind

ALPHA = (
    "Alpha Island is an island in the north. The island has a weather station. "
    "A ferry links it to the mainland. The old station closed in 1990. "
    "The lighthouse stands near the station. Fishing is the main trade."
)
BETA = (
    "Beta Town is a town on the coast. The town has a railway station. "
    "Its harbour was built in 1850."
)


class CountingSource(MemorySource):
    """A memory source that can be switched off (outage) and counts fetches."""

    def __init__(self, pages: dict[str, str]) -> None:
        super().__init__(pages)
        self.down = False
        self.fetches = 0

    def fetch(self, title: str) -> Any:
        self.fetches += 1
        if self.down:
            raise WikiUnavailableError("Wikipedia is unavailable right now (connection refused).")
        return super().fetch(title)


@pytest.fixture
def source() -> CountingSource:
    return CountingSource(
        {
            "Alpha Island": ALPHA,
            "Beta Town": BETA,
            "Mona Lisa": "The Mona Lisa "
            "is a portrait painted by Leonardo da Vinci. Leonardo worked on it for years.",
            "Leonardo da Vinci": "Leonardo da Vinci was an Italian polymath. "
            "Leonardo was born in Vinci.",
        }
    )


def run(source: MemorySource, actions: list[str], **context: Any) -> dict[str, Any]:
    outputs: list[ScriptOutput] = [
        f"Thought {i}: next.\nAction {i}: {a}" for i, a in enumerate(actions, 1)
    ]
    graph = build_graph(model=ScriptedChatModel(outputs=outputs), wiki=source)
    return graph.invoke(
        {"question": "q?"}, context=Context(max_steps=context.pop("max_steps", 60), **context)
    )


def kinds(out: dict[str, Any]) -> list[StepKind]:
    return [s["kind"] for s in out["trajectory"]]


def observations(out: dict[str, Any]) -> list[str]:
    return [s["observation"] for s in out["trajectory"]]


def test_repeated_lookup_walks_the_matches_then_repeats(source: CountingSource) -> None:
    out = run(source, ["Search[Alpha Island]"] + ["Lookup[station]"] * 5 + ["Finish[x]"])
    obs = observations(out)
    assert obs[1].startswith("(Result 1 / 3) The island has a weather station.")
    assert obs[2].startswith("(Result 2 / 3) The old station closed in 1990.")
    assert obs[3].startswith("(Result 3 / 3) The lighthouse stands near the station.")
    assert obs[4] == "No more results."
    assert kinds(out) == ["executed"] * 5 + ["repeat", "finish"]
    assert obs[5].startswith("You already did Lookup[station] at step 5")
    assert out["status"] == "finished" and out["answer"] == "x"


def test_a_new_search_restarts_the_keyword(source: CountingSource) -> None:
    out = run(
        source,
        [
            "Search[Alpha Island]",
            "Lookup[station]",
            "Lookup[station]",
            "Search[Beta Town]",
            "Lookup[station]",
            "Search[Alpha Island]",
            "Lookup[station]",
            "Lookup[ferry]",
            "Finish[x]",
        ],
    )
    obs = observations(out)
    assert obs[4] == "(Result 1 / 1) The town has a railway station."
    # Back on Alpha Island with its cursors reset: Lookup[station] meets the state of step 2.
    assert kinds(out)[6] == "repeat" and obs[6].startswith(
        "You already did Lookup[station] at step 2"
    )
    assert obs[7] == "(Result 1 / 1) A ferry links it to the mainland."


def test_same_lookup_on_two_pages_both_execute(source: CountingSource) -> None:
    out = run(
        source,
        [
            "Search[Mona Lisa]",
            "Lookup[Leonardo]",
            "Search[Leonardo da Vinci]",
            "Lookup[Leonardo]",
            "Finish[Leonardo da Vinci]",
        ],
    )
    assert kinds(out) == ["executed"] * 4 + ["finish"]
    assert observations(out)[3] == "(Result 1 / 2) Leonardo da Vinci was an Italian polymath."


def test_search_of_the_open_page_is_a_repeat_without_requests(source: CountingSource) -> None:
    out = run(
        source,
        ["Search[Alpha Island]", "Search[Alpha Island]", "Search[alpha_Island]", "Finish[x]"],
        repetition_limit=4,
    )
    assert kinds(out) == ["executed", "repeat", "repeat", "finish"]
    assert [u["wiki_requests"] for u in out["usage"]] == [1, 0, 0, 0]
    assert source.fetches == 1
    assert "already open (since step 1)" in observations(out)[1]


def test_a_b_a_b_cycle_is_caught_at_step_four(source: CountingSource) -> None:
    out = run(
        source,
        [
            "Search[Alpha Island]",
            "Search[Beta Town]",
            "Search[Alpha Island]",
            "Search[Beta Town]",
            "Finish[x]",
        ],
    )
    assert kinds(out) == ["executed", "executed", "executed", "repeat", "finish"]
    assert observations(out)[3].startswith("You already did Search[Beta Town] at step 2")


def test_going_back_to_a_page_then_lookup_reads_that_page(source: CountingSource) -> None:
    out = run(
        source,
        [
            "Search[Alpha Island]",
            "Search[Beta Town]",
            "Search[Alpha Island]",
            "Lookup[ferry]",
            "Finish[x]",
        ],
    )
    assert kinds(out) == ["executed"] * 4 + ["finish"]
    assert observations(out)[3] == "(Result 1 / 1) A ferry links it to the mainland."


def test_the_n_th_proposal_in_the_same_state_halts() -> None:
    source = MemorySource({"Alpha Island": ALPHA})
    out = run(
        source,
        [
            "Search[Alpha Island]",
            "Lookup[ferry]",
            "Lookup[ferry]",
            "Lookup[ferry]",
            "Lookup[ferry]",
            "Finish[x]",
        ],
    )
    # Lookup[ferry] after 1 shown: step 3 gives No more results, steps 4 and 5 are repeats of it.
    assert kinds(out) == ["executed", "executed", "executed", "repeat", "repeat"]
    assert out["status"] == "repetition_halted" and out["answer"] is None


def test_sixty_steps_over_six_pages_with_the_same_keywords_finish() -> None:
    keywords = ["station", "island", "town", "river", "born", "built", "north", "city", "war"]
    pages = {
        f"Page {p}": " ".join(
            f"Sentence {i} of page {p} mentions the {k}." for i, k in enumerate(keywords * 2)
        )
        for p in range(6)
    }
    actions: list[str] = []
    for p in range(6):
        actions += [f"Search[Page {p}]"] + [f"Lookup[{k}]" for k in keywords]
    actions = actions[:59] + ["Finish[done]"]
    out = run(MemorySource(pages), actions, max_steps=60)
    assert out["status"] == "finished" and out["steps"] == 60
    assert set(kinds(out)[:59]) == {"executed"}


def test_every_step_has_a_kind_including_rejected(source: CountingSource) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    outputs: list[ScriptOutput] = [
        "Action: Serch[x]",
        "Action: Search[Alpha Island]",
        "Action: Search[Alpha Island]",
        "Action: Lookup[ferry]",
        "Action: Finish[x]",
    ]
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=outputs), wiki=source)
    config = thread("k")
    graph.invoke({"question": "q?"}, config, context=Context(approve=True))
    graph.invoke(Command(resume=True), config, context=Context(approve=True))
    out = graph.invoke(Command(resume={"reject": "no"}), config, context=Context(approve=True))
    assert kinds(out) == ["invalid", "executed", "repeat", "rejected", "finish"]


def test_stream_events_carry_the_kind(source: CountingSource) -> None:
    graph = build_graph(
        model=ScriptedChatModel(
            outputs=[
                "Action: Search[Alpha Island]",
                "Action: Search[Alpha Island]",
                "Action: Finish[x]",
            ]
        ),
        wiki=source,
    )
    events = [chunk for chunk in graph.stream({"question": "q?"}, stream_mode="custom")]
    assert [e["kind"] for e in events] == ["executed", "repeat", "finish"]


def test_outage_stops_resumably_and_the_retry_is_not_a_repeat(source: CountingSource) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    graph = build_graph(
        InMemorySaver(),
        model=ScriptedChatModel(
            outputs=["Action: Search[Alpha Island]", "Action: Lookup[ferry]", "Action: Finish[x]"]
        ),
        wiki=source,
    )
    config = thread("o")
    source.down = True
    with pytest.raises(
        WikiOutageError, match="unavailable right now.*Search\\[Alpha Island\\] was not run"
    ):
        graph.invoke({"question": "q?"}, config)
    assert graph.get_state(config).values.get("steps", 0) == 0
    source.down = False
    out = graph.invoke(None, config)
    assert kinds(out) == ["executed", "executed", "finish"] and out["status"] == "finished"
    assert out["trajectory"][0]["observation"].startswith("Alpha Island is an island")
