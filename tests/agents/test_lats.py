"""LATS: whole searches through its graph with scripted models (tree, values, rewards, budgets)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from lats_scripts import GUESS_OR_SEARCH, LESSON, SECOND_BRANCH, SELF_CHECKED
from support import CLAIM, FEVER_PAGES, PAGES, QUESTION, SpyModel, thread

from wikireact import MemorySource
from wikireact.agents import AGENTS, load_agent
from wikireact.agents.lats import MIN_RECURSION_LIMIT
from wikireact.agents.lats.graph import build_graph
from wikireact.errors import ConfigurationError
from wikireact.models.scripted import ScriptOutput


def run(
    model: SpyModel,
    inputs: dict[str, Any],
    saver: BaseCheckpointSaver | None = None,
    **context: Any,
) -> dict:
    graph = build_graph(saver or InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    return dict(graph.invoke({"question": QUESTION, **inputs}, thread("l"), context=context))


def actions(out: dict[str, Any]) -> list[str]:
    return [node["action"] for node in out["tree"]]


def test_lats_is_registered_with_its_recursion_floor() -> None:
    assert AGENTS["lats"] == "wikireact.agents.lats.graph"
    assert load_agent("lats").graph.name == "wikireact-lats"
    assert MIN_RECURSION_LIMIT >= 4


def test_second_branch_finds_the_answer_after_the_first_terminal_fails(
    checkpointer: BaseCheckpointSaver,
) -> None:
    model = SpyModel(outputs=SECOND_BRANCH)
    out = run(model, {"gold_answer": "yes", "candidates": 2}, checkpointer)

    assert (out["answer"], out["status"], out["stopped_by"]) == ("yes", "finished", "solved")
    assert actions(out) == [
        "",
        "Finish[no]",
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Finish[yes]",
    ]
    assert [n["parent"] for n in out["tree"]] == [None, 0, 0, 2, 2]
    assert out["path"] == [0, 2, 4] and out["iteration"] == 2
    # the answer cites what its own branch read (Scott Derrickson's page), not the sibling's
    assert out["citations"] and {c["title"] for c in out["citations"]} == {"Scott Derrickson"}
    assert out["supported"] is True
    wrong, right = out["stats"]["1"], out["stats"]["4"]
    assert (wrong["verdict"], wrong["reward"], wrong["reflection"]) == ("wrong", 0.0, LESSON)
    assert (right["verdict"], right["reward"]) == ("correct", 1.0)
    assert out["stats"]["2"]["value"] == pytest.approx(0.7)
    # backpropagated once: the root gained the first iteration's best value (0.7)
    assert (out["stats"]["0"]["visits"], out["stats"]["0"]["total"]) == (1, pytest.approx(0.7))
    # the value prompt after the reflection shows the lesson; the reflection never sees "yes"
    assert LESSON in model.prompts[2] and "Value:" in model.prompts[2]
    assert (
        "judged incorrect" in model.prompts[1] and "yes" not in model.prompts[1].split("Outcome")[1]
    )
    # the second expansion is ReAct's prompt from the Search's state, lessons included
    assert "Observation 1: «Scott Derrickson" in model.prompts[3] and LESSON in model.prompts[3]
    assert out["model_calls"] == 5 == len(model.calls) == len(out["usage"]) - out["steps"]
    assert [u["call"] for u in out["usage"]] == [
        "expand", "step", "reflection", "step", "value", "expand", "step", "value", "step",
    ]  # fmt: skip
    assert [(s["node"], s["action"]) for s in out["trajectory"]][-1] == (4, "Finish[yes]")
    assert all(a["ended_at"] for a in out["audit"] if a["kind"] == "executed")


def test_uct_picks_the_unvisited_child_valued_above_a_visited_ones_bound() -> None:
    from wikireact.agents.lats.backprop import blank_stats
    from wikireact.agents.lats.tree import root_node
    from wikireact.agents.lats.uct import select_leaf

    tree = [root_node()]
    for child in (1, 2, 3):
        tree.append({**root_node(), "id": child, "parent": 0, "depth": 1, "iteration": 1})
    tree[3]["status"] = "finished"  # a terminal is never expanded, however valued
    stats = {str(node): blank_stats(value) for node, value in enumerate((0.0, 0.9, 0.6, 1.0))}
    stats["0"]["visits"] = 5
    stats["1"]["visits"], stats["1"]["total"] = 4, 0.4  # mean 0.1, bound 0.1 + 0.5 * 0.63
    assert select_leaf(tree, stats, weight=0.5) == 2
    # a large exploration weight sends it back down the visited branch
    assert select_leaf(tree, stats, weight=3.0) == 1


def test_second_iteration_expands_the_best_valued_unvisited_child() -> None:
    both = (
        "Thought 1: One.\nAction 1: Search[Ed Wood]\n\n"
        "Thought 1: Two.\nAction 1: Search[Scott Derrickson]"
    )
    then = "Thought 2: Done.\nAction 2: Finish[yes]"
    model = SpyModel(outputs=[both, "Value: 3", "Value: 9", then])
    out = run(model, {"gold_answer": "yes", "candidates": 2})
    assert out["tree"][3]["parent"] == 2 and out["path"] == [0, 2, 3]


@pytest.mark.parametrize(
    ("inputs", "context", "outputs", "stopped_by", "answer", "status"),
    [
        # one iteration: the wrong Finish is the best answer found
        ({"max_iterations": 1}, {}, [GUESS_OR_SEARCH, LESSON, "Value: 7"], "iterations", "no", "finished"),
        # one iteration without any Finish: no answer
        ({"max_iterations": 1, "candidates": 1}, {}, ["Thought 1: x\nAction 1: Search[Ed Wood]", "Value: 5"],
         "iterations", None, "budget_exhausted"),
        # depth 1: every child ends at the step budget (the Search too)
        ({}, {"max_steps": 1}, [GUESS_OR_SEARCH, LESSON, "Out of steps."], "depth", "no", "finished"),
        ({"candidates": 1}, {"max_steps": 1}, ["Thought 1: x\nAction 1: Search[Ed Wood]", "Out."],
         "depth", None, "budget_exhausted"),
        # three model calls: the first iteration spends them, the second never starts
        ({"max_model_calls": 3}, {}, [GUESS_OR_SEARCH, LESSON, "Value: 7"], "calls", "no", "finished"),
    ],
)  # fmt: skip
def test_each_budget_ends_the_search_with_the_best_answer_and_status(
    inputs: dict[str, Any],
    context: dict[str, Any],
    outputs: list[ScriptOutput],
    stopped_by: str,
    answer: str | None,
    status: str,
) -> None:
    model = SpyModel(outputs=outputs)
    out = run(model, {"gold_answer": "yes", "candidates": 2, **inputs}, **context)
    assert (out["stopped_by"], out["answer"], out["status"]) == (stopped_by, answer, status)
    assert out["model_calls"] == len(outputs) == len(model.calls)
    assert out["path"] == ([0, 1] if answer else [])


def test_an_unparseable_value_is_a_recorded_low_value() -> None:
    one = "Thought 1: x\nAction 1: Search[Ed Wood]"
    model = SpyModel(outputs=[one, "I would rather not say.\n\n\n" + "\n" * 5000])
    out = run(model, {"gold_answer": "yes", "candidates": 1, "max_iterations": 1})
    record = out["stats"]["1"]
    assert (record["valued"], record["value"]) == (False, 0.1)
    assert record["score"].startswith("I would rather not say")
    assert out["status"] == "budget_exhausted"


@pytest.mark.parametrize(
    ("reply", "value"),
    [("Value: 7", 0.7), ("**Score**: 8/10", 0.8), ("value = 6.5", 0.65), ("9\nclose", 0.9),
     ("Value: 0", 0.1), ("Value: 85", 0.1), ("", 0.1)],
)  # fmt: skip
def test_value_replies_read_tolerantly(reply: str, value: float) -> None:
    from wikireact.agents.lats.values import read_value

    assert read_value(reply).value == pytest.approx(value)


def test_approval_refusing_a_candidate_search_runs_nothing_and_the_search_goes_on() -> None:
    wiki = MemorySource(PAGES)
    model = SpyModel(outputs=[GUESS_OR_SEARCH, LESSON, "Value: 2"])
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    config = thread("a")
    inputs = {"question": QUESTION, "gold_answer": "yes", "candidates": 2, "max_iterations": 1}
    paused = graph.invoke(inputs, config, context={"approve": True})
    (pending,) = paused["__interrupt__"]
    assert pending.value["proposed_action"] == "Search[Scott Derrickson]"
    out = graph.invoke(Command(resume={"reject": "not that page", "by": "ana"}), config)

    assert wiki.requests == 0
    step = out["trajectory"][-1]
    assert (step["kind"], step["node"]) == ("rejected", 2) and "not that page" in step[
        "observation"
    ]
    assert out["audit"][-1]["approval"]["decision"] == "rejected"
    assert out["tree"][2]["status"] == "running" and out["stats"]["2"]["value"] == 0.2
    assert (out["answer"], out["stopped_by"]) == ("no", "iterations")


def test_fever_labels_are_normalised_and_judged() -> None:
    options = (
        "Thought 1: Not sure.\nAction 1: Finish[maybe]\n\n"
        "Thought 1: It is supported.\nAction 1: Finish[supported]"
    )
    model = SpyModel(outputs=[options, "Value: 2"])
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(FEVER_PAGES))
    out = graph.invoke(
        {"question": CLAIM, "gold_answer": "SUPPORTS", "candidates": 2},
        thread("f"),
        context={"task": "fever"},
    )
    assert (out["answer"], out["status"], out["stopped_by"]) == ("SUPPORTS", "finished", "solved")
    invalid = out["trajectory"][0]
    assert invalid["kind"] == "invalid" and "SUPPORTS" in invalid["observation"]
    assert "Claim: " + CLAIM in model.prompts[1]  # the value prompt names the claim


def test_without_gold_the_self_check_rejects_and_the_search_answers_later() -> None:
    model = SpyModel(outputs=SELF_CHECKED)
    out = run(model, {"candidates": 2})  # without a gold answer the check is on
    assert (out["answer"], out["stopped_by"]) == ("yes", "solved")
    assert out["stats"]["1"]["verdict"] == "rejected" and out["stats"]["4"]["verdict"] == "accepted"
    assert "Proposed answer: no" in model.prompts[1]
    assert [u["call"] for u in out["usage"]].count("self_check") == 2


def test_without_gold_the_check_is_on_by_default_and_off_the_first_finish_stands() -> None:
    model = SpyModel(outputs=[GUESS_OR_SEARCH, "Verdict: CORRECT"])
    out = run(model, {"candidates": 2})
    assert (out["answer"], out["stats"]["1"]["verdict"], out["model_calls"]) == (
        "no",
        "accepted",
        2,
    )
    model = SpyModel(outputs=[GUESS_OR_SEARCH])
    out = run(model, {"candidates": 2, "self_check": False})
    assert (out["answer"], out["stopped_by"], out["model_calls"]) == ("no", "solved", 1)


def test_tools_protocol_runs_candidates_as_text() -> None:
    model = SpyModel(outputs=[GUESS_OR_SEARCH])
    out = run(model, {"candidates": 2, "self_check": False}, protocol="tools")
    assert out["answer"] == "no" and out["audit"][0]["protocol"] == "text"


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"candidates": 0}, "candidates must be from 1 to 10"),
        ({"max_iterations": "many"}, "max_iterations must be a whole number"),
        ({"exploration_weight": -1}, "exploration_weight must be from 0 to 100"),
        ({"gold_answer": 3}, "gold_answer must be text"),
    ],
)
def test_bad_settings_are_one_line_errors(inputs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        run(SpyModel(outputs=[GUESS_OR_SEARCH]), inputs)


def test_an_ended_search_returns_its_output_without_calls() -> None:
    model = SpyModel(outputs=SECOND_BRANCH)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    first = graph.invoke({"question": QUESTION, "gold_answer": "yes", "candidates": 2}, thread())
    again = graph.invoke({"question": QUESTION}, thread())
    assert again["answer"] == first["answer"] == "yes" and len(model.calls) == 5


def test_a_fork_from_a_nodes_checkpoint_continues_the_search_on_a_new_branch(
    checkpointer: BaseCheckpointSaver,
) -> None:
    from wikireact.agents.lats.tree_view import node_checkpoints, tree_lines

    saver, wiki = checkpointer, MemorySource(PAGES)
    graph = build_graph(saver, model=SpyModel(outputs=SECOND_BRANCH), wiki=wiki)
    inputs = {"question": QUESTION, "gold_answer": "yes", "candidates": 2}
    original = graph.invoke(inputs, thread())
    made_in = node_checkpoints(graph, thread())
    assert sorted(made_in) == [0, 1, 2, 3, 4]
    shown = tree_lines(graph.get_state(thread()).values, made_in)
    assert shown[2].startswith("  * #2  depth 1  Search[Scott Derrickson]  value 0.70  visits 0")
    assert shown[1].endswith(f"wrong  checkpoint {made_in[1]}")

    # From the checkpoint that added node 2 (calls 0-1 made), another model values it and
    # expands it into one Finish: the search goes on from there, the original stays.
    expand = "Thought 2: Sure.\nAction 2: Finish[American]"
    other = SpyModel(outputs=["", "", "Value: 3", expand, "Do not guess."])
    fork = build_graph(saver, model=other, wiki=wiki)
    start: RunnableConfig = {"configurable": {"thread_id": "t1", "checkpoint_id": made_in[2]}}
    forked = fork.invoke(None, start)
    assert [n["action"] for n in forked["tree"]][3:] == ["Finish[American]"]
    assert forked["stats"]["2"]["value"] == 0.3 and len(other.calls) == 3
    assert (forked["answer"], forked["stopped_by"]) == ("no", "exhausted")
    assert wiki.requests == 2  # the fork ran no Search again (node 2's was saved)
    history = [s.values.get("answer") for s in graph.get_state_history(thread())]
    assert original["answer"] in history and forked["answer"] in history


def test_a_small_recursion_limit_stops_between_iterations_and_a_larger_one_continues() -> None:
    from lats_worker import SEARCH

    model = SpyModel(outputs=SEARCH)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    inputs = {"question": QUESTION, "gold_answer": "yes", "candidates": 3}
    stopped = graph.invoke(inputs, {**thread(), "recursion_limit": MIN_RECURSION_LIMIT})
    assert (stopped["status"], stopped["stopped_by"], stopped["iteration"]) == (
        "recursion_limit",
        "recursion_limit",
        1,
    )
    assert len(model.calls) == 4  # the first iteration, whole: expansion, reflection, 2 values
    out = graph.invoke({"question": QUESTION}, {**thread(), "recursion_limit": 200})
    assert (out["answer"], out["stopped_by"], out["status"]) == ("yes", "solved", "finished")
    assert len(model.calls) == len(SEARCH)  # nothing asked twice


def test_models_that_take_a_seed_are_sampled_and_a_cache_expands_as_its_model(
    tmp_path: Path,
) -> None:
    from wikireact.agents.lats.expansion import samples
    from wikireact.context import Context
    from wikireact.models.cache import CachedChatModel, SqliteModelCache

    scripted = SpyModel(outputs=[])
    assert not samples(scripted, Context(model="scripted:x.json"))
    cache = SqliteModelCache(tmp_path / "cache.db")
    cached = CachedChatModel(store=cache, identity="groq:m", load_model=lambda: scripted)
    assert samples(cached, Context(model="groq:qwen/qwen3.6-27b"))
    assert not samples(cached, Context(model="scripted:x.json"))
    cache.close()


def test_a_sampling_model_is_called_once_per_candidate() -> None:
    from wikireact.agents.lats.expansion import propose

    model = SpyModel(
        outputs=["Thought 1: a\nAction 1: Search[Ed Wood]", "Action 1: Search[Ed Wood]"]
    )
    proposal = propose(
        model, [], n=2, number=1, index=0, sampled=True, temperature=0.7
    )  # the second sample repeats the first action: kept once
    assert [c["raw"] for c in proposal.candidates] == ["Thought 1: a\nAction 1: Search[Ed Wood]"]
    assert len(proposal.calls) == 2 == len(model.calls)


def test_the_least_recursion_limit_runs_a_whole_iteration_of_five_children() -> None:
    wrong = "".join(
        f"Thought 1: {a}.\nAction 1: Finish[{a}]\n\n" for a in ("no", "maybe", "x", "y")
    )
    search = "Thought 1: Read.\nAction 1: Search[Ed Wood]"
    model = SpyModel(outputs=[wrong + search, "L1.", "L2.", "L3.", "L4.", "Value: 5"])
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    inputs = {"question": QUESTION, "gold_answer": "yes"}  # 5 candidates: 4 reflected on
    out = graph.invoke(inputs, {**thread(), "recursion_limit": MIN_RECURSION_LIMIT})
    assert (out["status"], out["stopped_by"], out["iteration"]) == (
        "recursion_limit",
        "recursion_limit",
        1,
    )
    assert len(out["tree"]) == 6 and len(model.calls) == 6
    assert MIN_RECURSION_LIMIT == 21
