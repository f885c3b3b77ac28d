"""ReWOO on FEVER (`task="fever"`): prompts for a claim, and a verdict that is a label.

The same in the library (`build_graph`), the served graph (module `graph`, settings from
the run's context, as Studio sends them), `wikireact ask --agent rewoo --task fever` and
`wikireact eval --method rewoo --task fever`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from support import CLAIM, FEVER_DATA, FEVER_PAGES, SpyModel, flat, thread, write_script
from support import write_snapshot as snapshot_of
from typer.testing import CliRunner

from wikireact import MemorySource
from wikireact.agents.rewoo.graph import build_graph
from wikireact.agents.rewoo.graph import graph as served_graph
from wikireact.cli.app import app
from wikireact.models.scripted import ScriptOutput

runner = CliRunner()
PLAN = (
    "Plan: Open his page.\n#E1 = Search[Nikolaj Coster-Waldau]\n"
    "Plan: Which network was he with?\n#E2 = LLM[Name the TV network in #E1.]"
)
SCRIPT: list[ScriptOutput] = [PLAN, "Fox.", "Thought: he was in Fox series.\nFinish[supported]"]


def run(outputs: list[Any]) -> tuple[dict[str, Any], SpyModel]:
    model = SpyModel(outputs=outputs)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(FEVER_PAGES))
    return graph.invoke({"question": CLAIM}, thread("c1"), context={"task": "fever"}), model


def test_the_claim_is_planned_checked_and_labelled() -> None:
    result, model = run(SCRIPT)
    assert result["status"] == "finished" and result["answer"] == "SUPPORTS"
    assert result["trajectory"][-1]["action"] == "Finish[SUPPORTS]"
    planner, llm_step, solver = model.texts
    assert "For the claim below" in planner[0]
    assert planner[-1] == f"Claim: {CLAIM}" and "Question:" not in "\n".join(planner)
    assert "Claim: The Danube flows into the Black Sea." in planner[1]  # FEVER's exemplars
    assert llm_step[1] == f"Claim: {CLAIM}"
    assert "Check the claim" in solver[0] and "NOT ENOUGH INFO" in solver[0]
    assert solver[-1] == f"Claim: {CLAIM}"


@pytest.mark.parametrize("verdict", ["yes", "true", "Fox"])
def test_a_verdict_that_is_no_label_is_an_invalid_step(verdict: str) -> None:
    result, _ = run([PLAN, "Fox.", f"Thought: sure.\nFinish[{verdict}]"])
    assert result["status"] == "no_answer" and result["answer"] is None
    last = result["trajectory"][-1]
    assert last["kind"] == "invalid"
    assert last["observation"].startswith(f"Invalid answer: `{verdict}` is not a label.")
    assert "Finish[SUPPORTS], Finish[REFUTES] or Finish[NOT ENOUGH INFO]" in last["observation"]


def test_hotpotqa_keeps_the_answer_as_written() -> None:
    model = SpyModel(outputs=SCRIPT)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(FEVER_PAGES))
    result = graph.invoke({"question": CLAIM}, thread("q"))
    assert result["answer"] == "supported" and model.texts[0][-1] == f"Question: {CLAIM}"


def test_the_served_graph_reads_the_task_from_the_runs_context(tmp_path: Path) -> None:
    snapshot = snapshot_of(tmp_path / "fever.db", FEVER_PAGES)
    context = {"task": "fever", "model": write_script(tmp_path, SCRIPT), "wiki": str(snapshot)}
    result = served_graph.invoke({"question": CLAIM}, context=context)
    assert result["status"] == "finished" and result["answer"] == "SUPPORTS"
    yes = {**context, "model": write_script(tmp_path, [PLAN, "Fox.", "Finish[yes]"], "yes.json")}
    assert served_graph.invoke({"question": CLAIM}, context=yes)["status"] == "no_answer"


def test_cli_ask_task_fever_labels_the_claim(tmp_path: Path, data_dir: Path) -> None:
    snapshot = snapshot_of(tmp_path / "fever.db", FEVER_PAGES)
    args = ["ask", CLAIM, "--agent", "rewoo", "--task", "fever", "--wiki", str(snapshot)]
    result = runner.invoke(
        app, [*args, "--model", write_script(tmp_path, SCRIPT), "--json", "--thread-id", "c1"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["answer"] == "SUPPORTS"
    history = runner.invoke(app, ["history", "c1", "--json"])
    assert json.loads(history.stdout)["settings"]["task"] == "fever"
    refused = runner.invoke(
        app, [*args, "--model", write_script(tmp_path, [PLAN, "Fox.", "Finish[yes]"], "yes.json")]
    )
    assert refused.exit_code == 0, refused.output
    shown = flat(refused.output)
    assert "`yes` is not a label" in shown and "Status: no_answer" in shown


def test_cli_eval_task_fever_scores_rewoo_labels(tmp_path: Path, data_dir: Path) -> None:
    dataset = tmp_path / "paper_dev.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in FEVER_DATA))
    snapshot = snapshot_of(tmp_path / "fever.db", FEVER_PAGES)
    sup, ref, nei = (str(r["id"]) for r in FEVER_DATA)
    plan = "Plan: look.\n#E1 = Search[Stranger Things]"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                sup: [PLAN, "Fox.", "Finish[Supported]"],
                ref: [plan, "Thought: Hawkins, not Bloomington.\nFinish[refutes]"],
                nei: [plan, "Thought: sure.\nFinish[yes]"],
            }
        )
    )
    out = tmp_path / "out"
    args = ["eval", str(dataset), "--task", "fever", "--method", "rewoo", "--out", str(out)]
    result = runner.invoke(app, [*args, "--model", f"scripted:{script}", "--wiki", str(snapshot)])
    assert result.exit_code == 0, result.output
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    records = {r["id"]: r for r in map(json.loads, lines)}
    assert {i: r["answer"] for i, r in records.items()} == {
        sup: "SUPPORTS",
        ref: "REFUTES",
        nei: None,
    }
    assert records[nei]["status"] == "no_answer" and records[nei]["invalid_steps"] == 1
    report = json.loads((out / "report.json").read_text())
    assert report["metrics"]["mean"]["accuracy"] == pytest.approx(2 / 3)
    assert report["settings"]["prompts_file"].endswith("rewoo_fever.json")
    assert report["settings"]["prompts_exemplars"] == {"rewoo_simple3": 3}
