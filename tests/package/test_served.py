"""The graph as LangGraph Studio serves it: `langgraph dev` on localhost, driven by langgraph_sdk."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from support import CLAIM, FEVER_PAGES, GOOD_RUN, QUESTION, TOOLS_RUN, write_snapshot

pytest.importorskip("langgraph_api")
from langgraph_sdk import get_sync_client  # noqa: E402

pytestmark = [pytest.mark.served, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(url: str, log: Path, seconds: float = 60) -> None:
    """Wait until the server at `url` answers /ok; fail with its log if it does not in time."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if requests.get(f"{url}/ok", timeout=1).ok:
                return
        except requests.RequestException:
            time.sleep(0.2)
    pytest.fail(f"the server did not answer /ok within {seconds:.0f} s:\n" + log.read_text())


@contextlib.contextmanager
def serving(argv: list[str], work: Path, env: dict[str, str], port: int) -> Iterator[str]:
    """Run the server `argv` in `work` (log: work/server.log); yield its URL once it is up."""
    log = (work / "server.log").open("w")
    proc = subprocess.Popen(
        argv, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, work / "server.log", seconds=90)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
            wait_for_group_to_end(proc.pid, seconds=15)  # a server it started saves its state
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def wait_for_group_to_end(group: int, seconds: float) -> None:
    """Wait until no process of process group `group` is left; raise TimeoutExpired if one stays."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise subprocess.TimeoutExpired(f"process group {group}", seconds)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`langgraph dev` run in a temporary directory, so its `.langgraph_api/` stays out of the checkout."""
    work = tmp_path_factory.mktemp("served")
    config = json.loads((REPO / "langgraph.json").read_text())
    config["dependencies"] = [str(REPO)]
    config["graphs"] = {name: str(REPO / spec) for name, spec in config["graphs"].items()}
    config.pop("env", None)
    (work / "langgraph.json").write_text(json.dumps(config))
    in_checkout_before = (REPO / ".langgraph_api").exists()
    port = free_port()
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "WIKIREACT_DATA_DIR": str(work / "data"),
        "LANGGRAPH_STRICT_MSGPACK": "true",  # as deployed (langgraph.json) and `wikireact studio`
    }
    env.pop("GROQ_API_KEY", None)
    langgraph = Path(sys.executable).with_name("langgraph")
    argv = [str(langgraph), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--config", str(work / "langgraph.json")]
    with serving(argv, work, env, port) as url:
        yield url, work
    log = (work / "server.log").read_text()
    assert "BlockingError" not in log
    assert "Blocked deserialization" not in log and "unregistered type" not in log
    assert (work / ".langgraph_api").is_dir(), "langgraph dev kept its state somewhere else"
    assert in_checkout_before or not (REPO / ".langgraph_api").exists(), (
        "langgraph dev wrote into the checkout"
    )


@pytest.fixture(scope="module")
def settings(server: tuple[str, Path]) -> dict:
    _, work = server
    snapshot = write_snapshot(work / "fixture.db")
    script = work / "script.json"
    script.write_text(json.dumps(GOOD_RUN))
    tools = work / "tools.json"
    tools.write_text(json.dumps(TOOLS_RUN))
    rewoo = work / "rewoo.json"
    rewoo.write_text(json.dumps(REWOO_RUN))
    plan_execute = work / "plan_execute.json"
    plan_execute.write_text(json.dumps(PLAN_EXECUTE_RUN))
    reflexion = work / "reflexion.json"
    reflexion.write_text(json.dumps(REFLEXION_RUN))
    return {
        "plan_execute_model": f"scripted:{plan_execute}",
        "reflexion_model": f"scripted:{reflexion}",
        "model": f"scripted:{script}",
        "wiki": str(snapshot),
        "tools_model": f"scripted:{tools}",
        "rewoo_model": f"scripted:{rewoo}",
    }


REWOO_RUN = [
    "Plan: Find Scott Derrickson's nationality.\n#E1 = Search[Scott Derrickson]\n"
    "Plan: Find Ed Wood's nationality.\n#E2 = Search[Ed Wood]\n"
    "Plan: Where was Wood born?\n#E3 = Lookup[born]",
    "Thought: both are American.\nFinish[yes]",
]


PLAN_EXECUTE_RUN = [
    "1. Find Scott Derrickson's nationality.\n2. Find Ed Wood's nationality.",
    "Thought 1: Search him.\nAction 1: Search[Scott Derrickson]",
    "Thought 2: American.\nAction 2: Finish[American]",
    "1. Find Ed Wood's nationality.",
    "Thought 1: Search him.\nAction 1: Search[Ed Wood]",
    "Thought 2: American.\nAction 2: Finish[American]",
    "Finish[yes]",
]
REFLEXION_RUN = [
    "Thought 1: I guess.\nAction 1: Finish[no]",
    "Search both people before answering.",
    "Thought 1: Search him.\nAction 1: Search[Scott Derrickson]",
    "Thought 2: Both American.\nAction 2: Finish[yes]",
]


def test_plan_execute_is_served_and_runs_an_episode(
    server: tuple[str, Path], settings: dict
) -> None:
    client = get_sync_client(url=server[0])
    thread = client.threads.create()
    context = {"model": settings["plan_execute_model"], "wiki": settings["wiki"]}
    result = client.runs.wait(
        thread["thread_id"], "plan-execute", input={"question": QUESTION}, context=context
    )
    assert isinstance(result, dict), result
    assert result["answer"] == "yes" and result["status"] == "finished"
    assert result["model_calls"] == 7
    assert [g["status"] for g in result["subgoals"]] == ["finished", "finished"]


PLAN_EXECUTE_FEVER_RUN = [
    "1. Find which networks Nikolaj Coster-Waldau worked for.",
    "Thought: his page.\nAction: Search[Nikolaj Coster-Waldau]",
    "Thought: Fox and HBO.\nAction: Finish[Fox and HBO]",
    "Finish[supported]",
]


def test_plan_execute_served_checks_a_claim_and_reads_its_settings(
    server: tuple[str, Path],
) -> None:
    url, work = server
    client = get_sync_client(url=url)
    script = work / "plan_execute_fever.json"
    script.write_text(json.dumps(PLAN_EXECUTE_FEVER_RUN))
    snapshot = write_snapshot(work / "fever.db", FEVER_PAGES)
    # verify_finish (on when served) would send the sub-goal's unseen "Fox and HBO" back once
    context: dict[str, Any] = {
        "model": f"scripted:{script}",
        "wiki": str(snapshot),
        "task": "fever",
        "verify_finish": False,
    }
    inputs = {"question": CLAIM, "max_subgoals": "2", "subgoal_steps": "3"}
    result = client.runs.wait(
        client.threads.create()["thread_id"], "plan-execute", input=inputs, context=context
    )
    assert isinstance(result, dict), result
    assert result["answer"] == "SUPPORTS" and result["subgoals"][0]["answer"] == "Fox and HBO"
    assert result["subgoals"][0]["budget"] == 3
    # (the server itself drops a context key its schema lacks, before the graph sees it)
    refused = client.runs.wait(
        client.threads.create()["thread_id"],
        "plan-execute",
        input={"question": CLAIM, "max_steps": 2},
        context=context,
        raise_error=False,
    )
    assert "max_steps is a context setting, not an input field" in json.dumps(refused), refused


def test_reflexion_is_served_and_runs_an_episode(server: tuple[str, Path], settings: dict) -> None:
    client = get_sync_client(url=server[0])
    thread = client.threads.create()
    context = {"model": settings["reflexion_model"], "wiki": settings["wiki"]}
    result = client.runs.wait(
        thread["thread_id"],
        "reflexion",
        input={"question": QUESTION, "gold_answer": "yes", "memory": "off"},
        context=context,
    )
    assert isinstance(result, dict), result
    assert result["answer"] == "yes" and result["model_calls"] == 4
    assert [t["verdict"] for t in result["trials"]] == ["wrong", "correct"]


LATS_RUN = [
    "Thought 1: A guess.\nAction 1: Finish[no]\n\nThought 1: Search.\nAction 1: Search[Ed Wood]",
    "Search before answering.",
    "Value: 7",
    "Thought 2: Both American.\nAction 2: Finish[yes]",
]


def test_lats_is_served_and_its_tree_is_in_the_threads_state(
    server: tuple[str, Path], settings: dict
) -> None:
    script = server[1] / "lats.json"
    script.write_text(json.dumps(LATS_RUN))
    client = get_sync_client(url=server[0])
    thread = client.threads.create()
    result = client.runs.wait(
        thread["thread_id"],
        "lats",
        input={"question": QUESTION, "gold_answer": "yes", "candidates": 2},
        context={"model": f"scripted:{script}", "wiki": settings["wiki"]},
    )
    assert isinstance(result, dict), result
    assert (result["answer"], result["stopped_by"], result["model_calls"]) == ("yes", "solved", 4)
    values = client.threads.get_state(thread["thread_id"])["values"]
    assert isinstance(values, dict)
    tree = values["tree"]
    assert [(n["id"], n["parent"], n["action"]) for n in tree][1:] == [
        (1, 0, "Finish[no]"),
        (2, 0, "Search[Ed Wood]"),
        (3, 2, "Finish[yes]"),
    ]


def test_rewoo_is_served_and_runs_an_episode(server: tuple[str, Path], settings: dict) -> None:
    client = get_sync_client(url=server[0])
    assistant = client.assistants.search(graph_id="rewoo")[0]
    graph = client.assistants.get_graph(assistant["assistant_id"])
    assert {n["id"] for n in graph["nodes"]} >= {"plan", "schedule", "work", "solve"}
    thread = client.threads.create()
    context = {"model": settings["rewoo_model"], "wiki": settings["wiki"]}
    result = client.runs.wait(
        thread["thread_id"], "rewoo", input={"question": QUESTION}, context=context
    )
    assert isinstance(result, dict), result
    assert result["answer"] == "yes" and result["status"] == "finished"
    assert result["model_calls"] == 2 and result["steps"] == 5
    assert [s["kind"] for s in result["trajectory"]] == [
        "plan",
        "executed",
        "executed",
        "executed",
        "finish",
    ]


def test_rewoo_approval_pauses_and_resumes_through_the_server(
    server: tuple[str, Path], settings: dict
) -> None:
    client = get_sync_client(url=server[0])
    thread_id = client.threads.create()["thread_id"]
    context = {"model": settings["rewoo_model"], "wiki": settings["wiki"], "approve": True}
    client.runs.wait(thread_id, "rewoo", input={"question": QUESTION}, context=context)
    proposed = []
    for _ in range(4):
        state = client.threads.get_state(thread_id)
        pending = [i for task in state["tasks"] for i in task["interrupts"]]
        if not pending:
            break
        assert len(pending) == 1
        proposed.append(pending[0]["value"]["proposed_action"])
        client.runs.wait(thread_id, "rewoo", command={"resume": True}, context=context)
    assert proposed == ["Search[Scott Derrickson]", "Search[Ed Wood]", "Lookup[born]"]
    values = client.threads.get_state(thread_id)["values"]
    assert isinstance(values, dict)
    assert values["status"] == "finished" and values["answer"] == "yes"
    assert [a["approval"]["decision"] for a in values["audit"][1:4]] == ["approved"] * 3


def test_assistant_graph_and_schemas(server: tuple[str, Path]) -> None:
    client = get_sync_client(url=server[0])
    assistants = client.assistants.search(graph_id="agent")
    assert assistants, "assistant `agent` is not listed"
    assistant_id = assistants[0]["assistant_id"]
    graph = client.assistants.get_graph(assistant_id)
    assert {n["id"] for n in graph["nodes"]} >= {"reason", "parse", "act", "observe"}
    schemas = client.assistants.get_schemas(assistant_id)
    input_schema, output_schema, context_schema = (
        schemas["input_schema"],
        schemas["output_schema"],
        schemas["context_schema"],
    )
    assert input_schema and output_schema and context_schema, schemas
    assert set(input_schema["properties"]) == {"question"}
    assert set(output_schema["properties"]) >= {"answer", "status", "steps", "trajectory"}
    assert {"citations", "supported"} <= set(output_schema["properties"])  # Studio shows them
    context = context_schema["properties"]
    assert set(context) >= {
        "model",
        "wiki",
        "max_steps",
        "repetition_limit",
        "observation_cap",
        "approve",
        "protocol",
        "task",
        "verify_finish",
    }
    assert "Step budget" in context["max_steps"]["description"]
    assert "fever: the input is a claim" in context["task"]["description"]
    assert "native tool calls" in context["protocol"]["description"]


def test_threaded_scripted_run_finishes(server: tuple[str, Path], settings: dict) -> None:
    client = get_sync_client(url=server[0])
    thread = client.threads.create()
    context = {"model": settings["model"], "wiki": settings["wiki"]}
    result = client.runs.wait(
        thread["thread_id"], "agent", input={"question": QUESTION}, context=context
    )
    assert isinstance(result, dict), result
    assert result["answer"] == "yes" and result["status"] == "finished" and result["steps"] == 4


def test_threaded_tools_protocol_run_finishes(server: tuple[str, Path], settings: dict) -> None:
    client = get_sync_client(url=server[0])
    thread = client.threads.create()
    context = {"model": settings["tools_model"], "wiki": settings["wiki"], "protocol": "tools"}
    result = client.runs.wait(
        thread["thread_id"], "agent", input={"question": QUESTION}, context=context
    )
    assert isinstance(result, dict), result
    assert result["answer"] == "yes" and result["status"] == "finished" and result["steps"] == 4
    assert [s["calls"][0]["name"] for s in result["trajectory"]] == [
        "search",
        "search",
        "lookup",
        "finish",
    ]
    assert [a["protocol"] for a in result["audit"]] == ["tools"] * 4
    assert result["audit"][0]["action"] == {
        "verb": "Search",
        "arguments": {"title": "Scott Derrickson"},
    }


def test_approval_pause_edit_and_resume(server: tuple[str, Path], settings: dict) -> None:
    client = get_sync_client(url=server[0])
    thread_id = client.threads.create()["thread_id"]
    context = {"model": settings["model"], "wiki": settings["wiki"], "approve": True}
    client.runs.wait(thread_id, "agent", input={"question": QUESTION}, context=context)
    state = client.threads.get_state(thread_id)
    assert state["next"] == ["act"] and isinstance(state["values"], dict)
    assert state["values"]["current"]["action"] == {
        "name": "Search",
        "argument": "Scott Derrickson",
    }
    assert (
        state["tasks"][0]["interrupts"][0]["value"]["proposed_action"] == "Search[Scott Derrickson]"
    )
    client.runs.wait(
        thread_id, "agent", command={"resume": {"action": "Search[Ed Wood]"}}, context=context
    )
    # step 2 (Search[Ed Wood]) repeats the edited step 1, so it is not executed and not
    # put to approval; the next pause is before Lookup[born]
    state = client.threads.get_state(thread_id)
    assert isinstance(state["values"], dict)
    assert state["next"] == ["act"] and state["values"]["current"]["action_text"] == "Lookup[born]"
    assert state["values"]["page_title"] == "Ed Wood" and state["values"]["page_sentences"]
    assert state["values"]["lookup_cursors"] == {}
    client.runs.wait(thread_id, "agent", command={"resume": True}, context=context)
    final = client.threads.get_state(thread_id)
    values = final["values"]
    assert isinstance(values, dict)
    assert final["next"] == []
    assert [s["action"] for s in values["trajectory"]] == [
        "Search[Ed Wood]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]
    assert values["status"] == "finished" and values["answer"] == "yes"
    assert values["lookup_cursors"] == {"born": 1}
    history = client.threads.get_history(thread_id, limit=100)
    assert len({h["values"].get("steps") for h in history if isinstance(h["values"], dict)}) >= 4


def test_wikireact_studio_serves_the_installed_graph_without_a_langgraph_json(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {**os.environ, "WIKIREACT_DATA_DIR": str(tmp_path / "data")}
    env.pop("GROQ_API_KEY", None)
    argv = [sys.executable, "-m", "wikireact", "studio", "--port", str(port)]
    with serving(argv, tmp_path, env, port) as url:  # tmp_path holds no langgraph.json
        assistants = requests.post(f"{url}/assistants/search", json={}, timeout=10).json()
    assert {(a["graph_id"], a["name"]) for a in assistants} == {
        ("agent", "wikireact"),
        ("rewoo", "wikireact-rewoo"),
        ("plan-execute", "wikireact-plan-execute"),
        ("reflexion", "wikireact-reflexion"),
        ("lats", "wikireact-lats"),
    }
