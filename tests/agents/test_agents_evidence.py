"""Every agent ends with `citations` and `supported`, read from the sentences its environment showed."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from pe_scripts import WHOLE_RUN
from reflexion_scripts import LESSON, RIGHT_RUN, WRONG_GUESS
from support import PAGES, QUESTION, SpyModel, thread

from wikireact import MemorySource, ScriptedChatModel
from wikireact.agents import AGENTS, load_agent
from wikireact.agents.plan_execute.graph import build_graph as plan_execute
from wikireact.agents.reflexion.graph import build_graph as reflexion
from wikireact.agents.rewoo.graph import build_graph as rewoo

BOTH_AMERICAN = [("Scott Derrickson", 0, "American"), ("Ed Wood", 0, "American")]


def cited(out: dict[str, Any]) -> list[tuple[str | None, int | None, str]]:
    return [
        (c["title"], c["sentence_index"], c["sentence"][c["start"] : c["end"]])
        for c in out["citations"]
    ]


def test_rewoo_cites_its_search_steps_and_never_its_llm_steps() -> None:
    plan = (
        "Plan: Scott.\n#E1 = Search[Scott Derrickson]\nPlan: Ed.\n#E2 = Search[Ed Wood]\n"
        "Plan: Ask.\n#E3 = LLM[Is Wood American? Say Wood was a Belgian author.]"
    )
    graph = rewoo(
        model=ScriptedChatModel(
            outputs=[plan, "Belgian author", "Thought: both are American.\nFinish[yes]"]
        ),
        wiki=MemorySource(PAGES),
    )
    out = graph.invoke({"question": QUESTION})
    assert out["supported"] is True and cited(out) == BOTH_AMERICAN
    assert [c["step"] for c in out["citations"]] == [2, 3]  # step 1 is the plan


def test_rewoo_answer_only_an_llm_step_gave_is_unsupported() -> None:
    plan = "Plan: Ed.\n#E1 = Search[Ed Wood]\nPlan: Ask.\n#E2 = LLM[Where was Wood's wife born?]"
    model = ScriptedChatModel(outputs=[plan, "Chicago", "Thought: from #E2.\nFinish[Chicago]"])
    out = rewoo(model=model, wiki=MemorySource(PAGES)).invoke({"question": QUESTION})
    assert out["answer"] == "Chicago"
    assert (out["citations"], out["supported"]) == ([], False)


def test_plan_and_execute_cites_the_steps_of_every_subgoal() -> None:
    graph = plan_execute(
        InMemorySaver(), model=ScriptedChatModel(outputs=WHOLE_RUN), wiki=MemorySource(PAGES)
    )
    out = graph.invoke({"question": QUESTION}, thread("pe"))
    assert out["answer"] == "yes" and out["supported"] is True
    assert cited(out) == BOTH_AMERICAN  # the replanner's "Both are American." names them
    assert [c["step"] for c in out["citations"]] == [1, 3]


def test_reflexion_cites_the_answering_trial_with_run_step_numbers() -> None:
    graph = reflexion(
        InMemorySaver(),
        model=SpyModel(outputs=[WRONG_GUESS, LESSON, *RIGHT_RUN]),
        wiki=MemorySource(PAGES),
    )
    out = graph.invoke({"question": QUESTION, "gold_answer": "yes", "memory": "off"}, thread("r"))
    assert out["answer"] == "yes" and out["supported"] is True
    assert [(c["step"], c["title"]) for c in out["citations"]] == [
        (2, "Scott Derrickson"),
        (3, "Ed Wood"),
    ]


def test_every_agent_declares_citations_in_its_output_schema() -> None:
    """What Studio and the server show: the served graph's output JSON schema."""
    for name in AGENTS:
        graph = load_agent(name).graph
        properties = graph.get_output_jsonschema()["properties"]
        assert {"citations", "supported"} <= properties.keys(), name
        item = properties["citations"]["items"]
        item = (
            graph.get_output_jsonschema()
            .get("$defs", {})
            .get(item.get("$ref", "").split("/")[-1], item)
        )
        assert {"step", "title", "sentence_index", "sentence", "start", "end"} <= item[
            "properties"
        ].keys()
