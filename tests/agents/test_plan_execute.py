"""Plan-and-Execute episodes with scripted models: plan, sub-goals as ReAct subgraphs, replanning."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, StateSnapshot
from pe_scripts import PLAN, REPLANNED, WHOLE_RUN, WHOLE_RUN_ACTIONS
from support import QUESTION, TOOLS_RUN

from wikireact import Context, MemorySource, ScriptedChatModel
from wikireact.agents import AGENTS
from wikireact.agents.plan_execute.graph import build_graph
from wikireact.errors import ConfigurationError
from wikireact.models.scripted import ScriptOutput
from wikireact.state import episode_ended

SEARCH_AND_FINISH = [
    "Thought: his page.\nAction: Search[Scott Derrickson]",
    "Thought: American.\nAction: Finish[American]",
]


def thread(name: str = "pe") -> Any:
    return {"configurable": {"thread_id": name}}


def run(script: list[Any], wiki: MemorySource, **context: Any) -> tuple[dict[str, Any], Any]:
    """Run a whole episode; return its full state and the model (to count its calls)."""
    model = ScriptedChatModel(outputs=script)
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    graph.invoke({"question": QUESTION}, thread(), context=Context(**context))
    return dict(graph.get_state(thread()).values), model


def test_agent_is_registered() -> None:
    assert AGENTS["plan-execute"] == "wikireact.agents.plan_execute.graph"


def test_plan_subgoals_replan_then_finish_is_one_scripted_run(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    graph = build_graph(checkpointer, model=ScriptedChatModel(outputs=WHOLE_RUN), wiki=wiki)
    out = graph.invoke({"question": QUESTION}, thread())
    assert out["answer"] == "yes" and out["status"] == "finished"
    assert [s["action"] for s in out["trajectory"]] == WHOLE_RUN_ACTIONS
    assert [s["subgoal"] for s in out["trajectory"]] == [1, 1, 2, 2, 2, 2]
    # The replanner's new list replaced the plan's second sub-goal.
    assert [(r["goal"], r["answer"], r["steps"]) for r in out["subgoals"]] == [
        ("Find Scott Derrickson's nationality.", "American", 2),
        ("Find where Ed Wood was born.", "Poughkeepsie, New York", 4),
    ]
    assert [(p["call"], p["subgoals"], p["finish"]) for p in out["plans"]] == [
        ("plan", ["Find Scott Derrickson's nationality.", "Find Ed Wood's nationality."], None),
        ("replan", ["Find where Ed Wood was born."], None),
        ("replan", [], "yes"),
    ]
    # Each step is counted once: no entry of a sub-goal's lists is added twice.
    assert out["steps"] == 6 == len(out["trajectory"]) == len(out["audit"])
    assert [a["step"] for a in out["audit"]] == [1, 2, 3, 4, 5, 6]
    assert [a["subgoal"] for a in out["audit"]] == [1, 1, 2, 2, 2, 2]
    assert out["model_calls"] == len(WHOLE_RUN) == len(out["usage"])
    assert [u["call"] for u in out["usage"]] == ["plan", "step", "step", "replan"] + [
        "step"
    ] * 4 + ["replan"]
    assert all(u["input_tokens"] > 0 and u["output_tokens"] > 0 for u in out["usage"])
    assert sum(u["wiki_requests"] for u in out["usage"]) == 2 == wiki.requests
    assert out["plan"] == []


def test_tools_protocol_plans_in_text_and_runs_subgoals_with_tool_calls(
    wiki: MemorySource,
) -> None:
    values, _ = run(["1. Answer the question.", *TOOLS_RUN, "Finish[yes]"], wiki, protocol="tools")
    assert values["answer"] == "yes" and values["status"] == "finished"
    assert [s["action"] for s in values["trajectory"]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]
    assert values["trajectory"][0]["calls"][0]["name"] == "search"
    assert {a["protocol"] for a in values["audit"]} == {"tools"}
    assert values["model_calls"] == 6


def test_each_subgoal_asks_its_own_question_with_the_results_so_far(wiki: MemorySource) -> None:
    values, _ = run(WHOLE_RUN, wiki)
    first, second = values["subgoals"]
    assert first["question"].startswith("Find Scott Derrickson's nationality. (part of answering:")
    assert QUESTION in first["question"] and "found so far" not in first["question"]
    assert "Find Scott Derrickson's nationality. -> «American»" in second["question"]


def test_subgoal_steps_stream_as_subgraph_events(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=WHOLE_RUN), wiki=wiki)
    events = list(
        graph.stream({"question": QUESTION}, thread(), subgraphs=True, stream_mode="updates")
    )
    parent = [node for ns, chunk in events if ns == () for node in chunk]
    assert parent == ["plan", "execute", "replan", "execute", "replan"]
    inner = [(ns, node) for ns, chunk in events if ns for node in chunk]
    namespaces = list(dict.fromkeys(ns for ns, _ in inner))
    assert len(namespaces) == 2 and all(ns[0].startswith("execute:") for ns in namespaces)
    first = [node for ns, node in inner if ns == namespaces[0]]
    assert first == ["reason", "parse", "act", "observe", "reason", "parse", "observe"]
    assert sum(node == "observe" for _, node in inner) == 6


def test_studio_sees_the_react_subgraph(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=WHOLE_RUN), wiki=wiki)
    assert [name for name, _ in graph.get_subgraphs()] == ["execute"]
    nodes = set(graph.get_graph(xray=True).nodes)
    assert {"plan", "replan", "execute:reason", "execute:act", "execute:observe"} <= nodes


@pytest.mark.parametrize(
    "plan",
    [
        "**1.** Find Scott Derrickson's nationality.\n**2.** Find Ed Wood's nationality.",
        "I will plan.\nStep 1: Find Scott Derrickson's nationality.\nStep 2) Find Ed Wood's nationality.",
        "1) Find Scott Derrickson's nationality.\n\n2 - Find Ed Wood's nationality.\nThat is all.",
    ],
)
def test_a_plan_is_read_tolerantly(plan: str, wiki: MemorySource) -> None:
    values, _ = run([plan, *SEARCH_AND_FINISH, "Finish[yes]"], wiki)
    assert values["plans"][0]["subgoals"] == [
        "Find Scott Derrickson's nationality.",
        "Find Ed Wood's nationality.",
    ]
    assert values["answer"] == "yes" and len(values["subgoals"]) == 1 and values["plan"] == []


def test_a_malformed_plan_is_an_invalid_outcome_asked_again_once(wiki: MemorySource) -> None:
    values, _ = run(["I would look them up.", PLAN, *SEARCH_AND_FINISH, "Finish[yes]"], wiki)
    first, second = values["plans"][:2]
    assert first["error"] and "no numbered sub-goal" in first["error"] and not first["subgoals"]
    assert second["error"] is None and len(second["subgoals"]) == 2
    assert values["status"] == "finished" and values["answer"] == "yes"
    assert values["model_calls"] == 5 == len(values["usage"])


def test_the_retry_prompt_says_what_was_wrong(wiki: MemorySource) -> None:
    values, model = run(
        ["1. Find it.\n3. Then that.", PLAN, *SEARCH_AND_FINISH, "Finish[yes]"], wiki
    )
    assert "numbered 1 then 3" in values["plans"][0]["error"]
    assert values["answer"] == "yes"


def test_two_malformed_plans_end_the_episode_invalid_plan(wiki: MemorySource) -> None:
    values, _ = run(["Finish[yes]", "Action: Search[Ed Wood]"], wiki)
    assert values["status"] == "invalid_plan" and values["answer"] is None
    assert values["steps"] == 0 and values["trajectory"] == [] and wiki.requests == 0
    assert values["model_calls"] == 2
    assert "must be a plan" in values["plans"][0]["error"]
    assert "does not act" in values["plans"][1]["error"]


def test_two_malformed_replies_of_the_replanner_end_the_episode(wiki: MemorySource) -> None:
    script = [PLAN, *SEARCH_AND_FINISH, "Hmm.", "1. A\n1. B"]
    values, _ = run(script, wiki)
    assert values["status"] == "invalid_plan" and values["answer"] is None
    assert values["steps"] == 2 and values["model_calls"] == 5
    assert [p["error"] is not None for p in values["plans"]] == [False, True, True]


def test_a_malformed_reply_then_a_good_one_resets_the_count(wiki: MemorySource) -> None:
    script: list[ScriptOutput] = [
        "nonsense",
        PLAN,
        *SEARCH_AND_FINISH,
        "nonsense",
        REPLANNED,
        "Thought: page.\nAction: Search[Ed Wood]",
        "Thought: ok.\nAction: Finish[Poughkeepsie]",
        "Finish[yes]",
    ]
    values, _ = run(script, wiki)
    assert values["status"] == "finished" and values["answer"] == "yes"


def test_a_subgoal_runs_with_its_own_step_budget(wiki: MemorySource) -> None:
    script: list[ScriptOutput] = [
        PLAN,
        "Thought: page.\nAction: Search[Scott Derrickson]",
        "Thought: more.\nAction: Lookup[Denver]",  # the sub-goal's budget (2) ends here
        "1. Find Ed Wood's nationality.",
        *SEARCH_AND_FINISH,
        "Finish[yes]",
    ]
    model = ScriptedChatModel(outputs=script)
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    graph.invoke({"question": QUESTION, "subgoal_steps": 2}, thread())
    values = graph.get_state(thread()).values
    first, second = values["subgoals"]
    assert (first["status"], first["answer"], first["steps"], first["budget"]) == (
        "budget_exhausted",
        None,
        2,
        2,
    )
    assert "Derrickson was born in Denver" in first["last_observation"]
    assert second["status"] == "finished" and values["answer"] == "yes"


def test_the_total_step_budget_caps_the_last_subgoal_then_asks_for_an_answer(
    wiki: MemorySource,
) -> None:
    script: list[ScriptOutput] = [
        PLAN,
        *SEARCH_AND_FINISH,
        "1. Find Ed Wood's nationality.",
        "Thought: page.\nAction: Search[Ed Wood]",  # the one step left in the total budget
        "Finish[yes]",
    ]
    values, model = run(script, wiki, max_steps=3)
    assert [r["budget"] for r in values["subgoals"]] == [3, 1]
    assert values["subgoals"][1]["status"] == "budget_exhausted"
    assert values["steps"] == 3 and values["status"] == "finished" and values["answer"] == "yes"


def test_a_list_after_the_budget_is_spent_ends_budget_exhausted(wiki: MemorySource) -> None:
    script: list[ScriptOutput] = [
        "1. Find Scott Derrickson's nationality.\n2. Find Ed Wood's nationality.\n3. Compare.",
        *SEARCH_AND_FINISH,
        "1. Find Ed Wood's nationality.",  # no sub-goal may run any more
    ]
    model = ScriptedChatModel(outputs=script)
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    graph.invoke({"question": QUESTION, "max_subgoals": 1}, thread())
    values = graph.get_state(thread()).values
    assert values["plans"][0]["subgoals"][2] == "Compare."  # read whole, run within the limit
    assert len(values["subgoals"]) == 1
    assert values["status"] == "budget_exhausted" and values["answer"] is None
    assert values["model_calls"] == 4


def test_limits_out_of_range_are_refused_at_the_door(wiki: MemorySource) -> None:
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=WHOLE_RUN), wiki=wiki)
    for bad in ({"max_subgoals": 0}, {"subgoal_steps": "four"}, {"max_subgoals": 101}):
        with pytest.raises(ConfigurationError, match="must be (a whole number|from 1 to 100)"):
            graph.invoke({"question": QUESTION, **bad}, thread())
    assert not graph.get_state(thread()).values  # nothing was stored


APPROVAL_RUN: list[ScriptOutput] = [
    PLAN,
    *SEARCH_AND_FINISH,
    "1. Find Ed Wood's nationality.",
    "Thought: his page.\nAction: Search[Ed Wood]",  # rejected by the reviewer
    "Thought: try again.\nAction: Search[Ed Wood]",
    "Thought: American.\nAction: Finish[American]",
    "Finish[yes]",
]


def test_approval_pauses_inside_the_subgraph_and_resumes(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    graph = build_graph(checkpointer, model=ScriptedChatModel(outputs=APPROVAL_RUN), wiki=wiki)
    out = graph.invoke({"question": QUESTION}, thread(), context=Context(approve=True))
    decisions = [{"approve": True, "by": "alice"}, {"reject": "not yet", "by": "bob"}, True]
    asked: list[str] = []
    requests: list[int] = []
    while out.get("__interrupt__"):
        request = out["__interrupt__"][0].value
        asked.append(request["proposed_action"])
        assert request["checkpoint_ns"].startswith("execute:")
        assert request["question"].startswith("Find ")
        requests.append(wiki.requests)
        # Studio and get_state see the paused sub-goal's state.
        inner = graph.get_state(thread(), subgraphs=True).tasks[0].state
        assert (
            isinstance(inner, StateSnapshot)
            and inner.values["current"]["action_text"] == request["proposed_action"]
        )
        out = graph.invoke(Command(resume=decisions[len(asked) - 1]), thread())
    assert asked == ["Search[Scott Derrickson]", "Search[Ed Wood]", "Search[Ed Wood]"]
    assert requests == [0, 1, 1]  # paused before each Search ran
    assert out["answer"] == "yes" and out["status"] == "finished"
    assert [(a["kind"], (a["approval"] or {}).get("by")) for a in out["audit"]] == [
        ("executed", "alice"),
        ("finish", None),
        ("rejected", "bob"),
        ("executed", None),
        ("finish", None),
    ]
    assert wiki.requests == 2  # the rejected Search never ran; nothing ran twice
    assert out["model_calls"] == len(APPROVAL_RUN)


def test_an_episode_out_of_steps_continues_when_a_run_raises_the_budget(
    wiki: MemorySource,
) -> None:
    script: list[ScriptOutput] = [
        PLAN,
        *SEARCH_AND_FINISH,
        "1. Find Ed Wood's nationality.",  # the 2 steps are spent: ends budget_exhausted
        "1. Find Ed Wood's nationality.",  # reopened with 6 steps: the replanner goes on
        "Thought: his page.\nAction: Search[Ed Wood]",
        "Thought: American.\nAction: Finish[American]",
        "Finish[yes]",
    ]
    graph = build_graph(InMemorySaver(), model=ScriptedChatModel(outputs=script), wiki=wiki)
    first = graph.invoke({"question": QUESTION}, thread(), context=Context(max_steps=2))
    assert first["status"] == "budget_exhausted" and first["steps"] == 2
    out = graph.invoke({"question": QUESTION}, thread(), context=Context(max_steps=6))
    assert out["status"] == "finished" and out["answer"] == "yes"
    assert [r["answer"] for r in out["subgoals"]] == ["American", "American"]
    assert out["steps"] == 4 and out["model_calls"] == len(script) == len(out["usage"])


def test_an_invalid_plan_has_ended(wiki: MemorySource) -> None:
    values, _ = run(["no plan", "still none"], wiki)
    assert values["status"] == "invalid_plan" and episode_ended(values)


def test_a_model_failure_inside_a_subgoal_resumes_there(
    checkpointer: BaseCheckpointSaver, wiki: MemorySource
) -> None:
    model = ScriptedChatModel(outputs=WHOLE_RUN, errors={6: TimeoutError("model timed out")})
    graph = build_graph(checkpointer, model=model, wiki=wiki)
    with pytest.raises(Exception, match="did not answer step 3"):
        graph.invoke({"question": QUESTION}, thread())
    inner = graph.get_state(thread(), subgraphs=True).tasks[0].state
    assert isinstance(inner, StateSnapshot) and inner.values["steps"] == 2
    model.errors.clear()  # the model is back
    out = graph.invoke({"question": QUESTION}, thread())  # the same question continues it
    assert out["answer"] == "yes" and [s["action"] for s in out["trajectory"]] == WHOLE_RUN_ACTIONS
    assert out["model_calls"] == len(WHOLE_RUN) and wiki.requests == 2  # nothing ran twice
