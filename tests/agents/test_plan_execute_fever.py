"""Plan-and-Execute under `task="fever"`: claim prompts, free sub-goals, a labelled verdict.

The planner and replanner are told of a claim; each sub-goal is a free question (its
ReAct episode runs as HotpotQA's, so `Finish[Fox]` is its answer, not an invalid step);
the replanner's Finish is the claim's verdict: one of the three labels (any form
`normalize_label` reads), or a malformed reply. The same in the library, the served graph
object, `wikireact ask` and `wikireact eval`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from support import (
    CLAIM,
    FEVER_DATA,
    FEVER_PAGES,
    SpyModel,
    snapshot_eval,
    thread,
    write_script,
    write_snapshot,
)
from typer.testing import CliRunner

from wikireact import Context, MemorySource
from wikireact.agents.plan_execute import graph as served
from wikireact.agents.plan_execute.graph import build_graph
from wikireact.cli.app import app
from wikireact.models.scripted import ScriptOutput

SUBGOAL = "Find which networks Nikolaj Coster-Waldau worked for."
RUN: list[ScriptOutput] = [
    f"1. {SUBGOAL}",
    "Thought: his page.\nAction: Search[Nikolaj Coster-Waldau]",
    "Thought: Fox and HBO.\nAction: Finish[Fox and HBO]",  # a free answer, not a label
    "Fox is among them.\nFinish[supported]",
]


def run(outputs: list[ScriptOutput], **context: Any) -> tuple[dict[str, Any], SpyModel]:
    model = SpyModel(outputs=outputs)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(FEVER_PAGES))
    out = graph.invoke({"question": CLAIM}, thread(), context=Context(task="fever", **context))
    return out, model


def test_a_claim_is_planned_researched_with_free_subgoals_and_labelled() -> None:
    out, model = run(RUN)
    assert (out["status"], out["answer"]) == ("finished", "SUPPORTS")
    goal = out["subgoals"][0]
    assert (goal["status"], goal["answer"]) == ("finished", "Fox and HBO")
    plan, step, replan = model.prompts[0], model.prompts[1], model.prompts[3]
    assert "check a claim" in plan and plan.rstrip().endswith(f"Claim: {CLAIM}")
    assert "Claim: The Danube is longer than the Rhine." in plan  # FEVER's own exemplars
    assert "Question: Are the Danube" not in plan
    assert f"Question: {SUBGOAL} (part of checking the claim: {CLAIM})" in step
    assert "Finish[answer]" in step and "SUPPORTS" not in step.split("Question:")[0]
    assert f"Claim: {CLAIM}\nResults:\n1. {SUBGOAL} -> «Fox and HBO»" in replan
    assert "SUPPORTS, REFUTES or NOT ENOUGH INFO" in replan


def test_a_verdict_that_is_not_a_label_is_an_invalid_reply() -> None:
    out, _ = run([*RUN[:3], "Finish[yes]", "Finish[not enough info.]"])
    assert out["answer"] == "NOT ENOUGH INFO"
    assert "`yes` is not a label" in out["plans"][1]["error"]
    assert out["plans"][1]["finish"] is None
    out, _ = run([*RUN[:3], "Finish[yes]", "Finish[true]"])
    assert (out["status"], out["answer"]) == ("invalid_plan", None)


def test_the_final_call_asks_for_a_label() -> None:
    out, model = run([*RUN[:3], "Finish[REFUTES]"], max_steps=2)
    assert out["answer"] == "REFUTES"
    assert "budget is spent" in model.prompts[3] and "NOT ENOUGH INFO when" in model.prompts[3]


def test_the_served_graph_reads_the_task_from_its_context(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "fever.db", FEVER_PAGES)
    context = {"task": "fever", "model": write_script(tmp_path, RUN), "wiki": str(snapshot)}
    out = served.graph.invoke({"question": CLAIM}, context=context)
    assert out["answer"] == "SUPPORTS" and out["subgoals"][0]["answer"] == "Fox and HBO"


def test_ask_and_eval_give_the_label(tmp_path: Path, data_dir: Path) -> None:
    snapshot = write_snapshot(tmp_path / "fever.db", FEVER_PAGES)
    args = ["ask", "--task", "fever", CLAIM, "--agent", "plan-execute", "--json"]
    args += ["--model", write_script(tmp_path, RUN), "--wiki", str(snapshot)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["answer"] == "SUPPORTS"

    claims = tmp_path / "claims.jsonl"
    claims.write_text(json.dumps(FEVER_DATA[0]) + "\n")
    model = SpyModel(by_question={str(FEVER_DATA[0]["id"]): RUN})
    snapshot_eval(claims, snapshot, tmp_path / "out", model, "plan-execute", task="fever")
    (record,) = map(json.loads, (tmp_path / "out" / "trajectories.jsonl").read_text().splitlines())
    assert (record["answer"], record["em"], record["task"]) == ("SUPPORTS", 1.0, "fever")
