"""The model cache: a cached rerun makes no model call and gives identical records."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support import (
    EVAL_SCRIPT,
    GOOD_RUN,
    METRIC_TIMES,
    QUESTION,
    TOOLS_RUN,
    SpyModel,
    eval_config,
    snapshot_eval,
    write_snapshot,
)
from typer.testing import CliRunner

from wikireact.cli.app import app
from wikireact.errors import ModelCacheError
from wikireact.eval.methods import Method
from wikireact.eval.run import run_eval
from wikireact.models.cache import CachedChatModel, SqliteModelCache
from wikireact.models.call_metadata import CALL_INDEX_KEY
from wikireact.models.scripted import ScriptOutput
from wikireact.wiki.snapshot import SnapshotSource

TIMING = ("latency_s", "model_seconds_per_step", "wiki_seconds_per_step")


def _records(out: Path) -> list[dict]:
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    return sorted(
        ({k: v for k, v in json.loads(line).items() if k not in TIMING} for line in lines),
        key=lambda r: (r["id"], r["seed"]),
    )


@pytest.mark.parametrize("method", ["react", "act", "cot", "standard", "cot-sc-react"])
def test_cached_rerun_with_a_changed_script_replays_every_call(
    files: tuple[Path, Path], tmp_path: Path, method: Method
) -> None:
    dataset, snapshot = files
    cache = tmp_path / "model-cache.db"
    first_model = SpyModel(outputs=[*EVAL_SCRIPT, *EVAL_SCRIPT])
    first = snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "first",
        first_model,
        method,
        sc_samples=3,
        model_cache=str(cache),
    )
    calls = len(first_model.prompts)
    assert calls > 0 and first["model_cache"] == {"file": str(cache), "hits": 0, "misses": calls}
    # Another script (and a model that fails on any call): everything must come from the cache.
    replay_model = SpyModel(outputs=["Action: Finish[something else]"] * 10, fail_after=0)
    replay = snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "replay",
        replay_model,
        method,
        sc_samples=3,
        model_cache=str(cache),
        concurrency=1,
    )
    assert replay_model.prompts == []
    assert replay["model_cache"] == {"file": str(cache), "hits": calls, "misses": 0}
    assert _records(tmp_path / "replay") == _records(tmp_path / "first")


def test_cot_sc_samples_are_cached_one_by_one(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    votes: list[ScriptOutput] = [
        "Thought: a. So the answer is yes.",
        "Thought: b. So the answer is no.",
        "Thought: c. So the answer is maybe.",
    ]
    cache = tmp_path / "c.db"
    first = snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "a",
        SpyModel(outputs=votes),
        "cot-sc",
        sc_samples=3,
        model_cache=str(cache),
    )
    assert (
        first["model_cache"]["misses"] == 4 * 3
    )  # same prompt per question, three samples: three entries
    replay = snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "b",
        SpyModel(outputs=votes[:1] * 3, fail_after=0),
        "cot-sc",
        sc_samples=3,
        model_cache=str(cache),
    )
    assert replay["model_cache"] == {"file": str(cache), "hits": 12, "misses": 0}
    record = _records(tmp_path / "b")[0]
    assert record["votes"]["answers"] == ["yes", "no", "maybe"]
    # Two more samples: the first three are replayed, only the new ones reach the model.
    more = SpyModel(
        outputs=[*votes, "Thought: So the answer is no.", "Thought: So the answer is no."]
    )
    bigger = snapshot_eval(
        dataset, snapshot, tmp_path / "c", more, "cot-sc", sc_samples=5, model_cache=str(cache)
    )
    assert bigger["model_cache"] == {"file": str(cache), "hits": 12, "misses": 8}


def test_cache_key_holds_stop_sampling_index_and_model(tmp_path: Path) -> None:
    store = SqliteModelCache(tmp_path / "c.db")
    inner = SpyModel(outputs=["one", "two", "three"])
    cached = CachedChatModel(identity="scripted:x", store=store, load_model=lambda: inner)
    other = CachedChatModel(identity="groq:other", store=store, load_model=lambda: inner)

    def ask(model: CachedChatModel, index: int, **kw: Any) -> str:
        return model.invoke("hello", config={"metadata": {CALL_INDEX_KEY: index}}, **kw).text

    assert ask(cached, 0) == "one" and ask(cached, 0) == "one"
    assert ask(cached, 1) == "two"  # another index: another entry
    assert ask(cached, 0, stop=["x"]) == "one" and ask(cached, 0, temperature=0.7) == "one"
    assert ask(other, 0) == "one"
    assert len(inner.calls) == 5 and cached.hits == 1
    store.close()
    reopened = CachedChatModel(
        identity="scripted:x",
        store=SqliteModelCache(tmp_path / "c.db"),
        load_model=lambda: pytest.fail("the model must not be loaded"),
    )
    assert ask(reopened, 1) == "two" and reopened.hits == 1 and reopened.misses == 0


def test_another_programs_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE people(name TEXT)")
    before = foreign.read_bytes()
    with pytest.raises(ModelCacheError, match="another program's SQLite database"):
        SqliteModelCache(foreign)
    assert foreign.read_bytes() == before
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ModelCacheError, match="cannot use model cache"):
        SqliteModelCache(garbage)


def test_ask_with_model_cache_replays_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    snapshot = write_snapshot(tmp_path / "snap.db")
    script = tmp_path / "s.json"
    script.write_text(json.dumps(GOOD_RUN))
    cache = tmp_path / "cache.db"
    runner = CliRunner()
    base = ["ask", QUESTION, "--wiki", str(snapshot), "--json", "--model-cache", str(cache)]
    first = runner.invoke(
        app, [*base, "--model", f"scripted:{script}", "--db", str(tmp_path / "a.db")]
    )
    assert first.exit_code == 0, first.output
    assert "0 hits, 4 misses" in first.stderr
    script.write_text(json.dumps(["Action: Finish[no]"] * 4))
    second = runner.invoke(
        app, [*base, "--model", f"scripted:{script}", "--db", str(tmp_path / "b.db")]
    )
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["answer"] == json.loads(first.stdout)["answer"] == "yes"
    assert "4 hits, 0 misses" in second.stderr
    # A Groq model without a key: the cache has none of its calls, so the first step says why.
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    groq = runner.invoke(app, [*base, "--model", "groq:some/model", "--db", str(tmp_path / "c.db")])
    assert groq.exit_code == 1 and "GROQ_API_KEY" in groq.stderr


def test_recorded_run_replays_offline_from_two_files(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    """A run recorded against (fake) live Wikipedia replays from its model cache and wiki recording."""
    from urllib.parse import parse_qsl, urlparse

    import requests
    import responses
    from fake_mediawiki import URL, FakeMediaWiki, live
    from support import PAGES

    from wikireact.wiki.live import CachedSource
    from wikireact.wiki.snapshot import SnapshotDatabase

    dataset, _ = files
    fake = FakeMediaWiki(pages=dict(PAGES), search_results={"Serch": []})

    def answer(request: requests.PreparedRequest) -> tuple[int, dict, str]:
        return (
            200,
            {},
            json.dumps(
                fake.reply(
                    dict(parse_qsl(urlparse(str(request.url)).query, keep_blank_values=True))
                )
            ),
        )

    recording, cache = tmp_path / "run-wiki.db", tmp_path / "run-model.db"
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add_callback(responses.GET, URL, callback=answer)
        run_eval(
            eval_config(dataset, snapshot=recording, model_cache=str(cache)),
            tmp_path / "recorded",
            model=SpyModel(outputs=EVAL_SCRIPT),
            wiki=CachedSource(live(), SnapshotDatabase.create(recording)),
        )
    assert fake.calls
    replay = run_eval(
        eval_config(dataset, snapshot=recording, model_cache=str(cache)),
        tmp_path / "replay",
        model=SpyModel(outputs=[], fail_after=0),
        wiki=SnapshotSource.open(recording),
    )
    assert replay["model_cache"]["misses"] == 0
    recorded, replayed = _records(tmp_path / "recorded"), _records(tmp_path / "replay")
    # Identical records, except wiki_requests: the source's own request count (HTTP requests while
    # recording, which also depend on which question fetched a page first; snapshot reads on replay).
    cost = ("wiki_requests",)
    assert [{k: v for k, v in r.items() if k not in cost} for r in replayed] == [
        {k: v for k, v in r.items() if k not in cost} for r in recorded
    ]
    again = run_eval(
        eval_config(dataset, snapshot=recording, model_cache=str(cache)),
        tmp_path / "again",
        model=SpyModel(outputs=[], fail_after=0),
        wiki=SnapshotSource.open(recording),
    )
    assert again["metrics"]["per_seed"] == {
        seed: {**m, **{t: again["metrics"]["per_seed"][seed][t] for t in METRIC_TIMES}}
        for seed, m in replay["metrics"]["per_seed"].items()
    }
    assert _records(tmp_path / "again") == replayed  # a replay of a replay: every field but timings


TOOLS_SCRIPT: list[ScriptOutput] = [
    {"tool": "search", "args": {"title": "Scott Derrickson"}, "content": "look him up."},
    {"tool": "serch", "args": {"title": "Ed Wood"}, "content": "next."},
    {"tool": "search", "args": {"title": "Ed Wood"}, "content": "again."},
    {"tool": "lookup", "args": {"keyword": "born"}, "content": "born?"},
    {"tool": "finish", "args": {"answer": "Poughkeepsie, New York"}, "content": "done."},
]


def test_tools_protocol_eval_records_and_replays_tool_calls(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, snapshot = files
    cache = tmp_path / "model-cache.db"
    first_model = SpyModel(outputs=TOOLS_SCRIPT)
    first = snapshot_eval(
        dataset, snapshot, tmp_path / "first", first_model, protocol="tools", model_cache=str(cache)
    )
    calls = len(first_model.prompts)
    assert first["model_cache"]["misses"] == calls and first_model.tools  # tools were bound
    replay_model = SpyModel(outputs=[{"tool": "finish", "args": {"answer": "no"}}], fail_after=0)
    replay = snapshot_eval(
        dataset,
        snapshot,
        tmp_path / "replay",
        replay_model,
        protocol="tools",
        model_cache=str(cache),
    )
    assert replay_model.prompts == []
    assert replay["model_cache"] == {"file": str(cache), "hits": calls, "misses": 0}
    records = _records(tmp_path / "replay")
    assert records == _records(tmp_path / "first")
    assert [s["kind"] for s in records[0]["trajectory"]] == [
        "executed",
        "invalid",
        "executed",
        "executed",
        "finish",
    ]


def test_cache_key_holds_the_bound_tools_and_the_calls_made(tmp_path: Path) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from wikireact.protocols.tools import TOOLS

    inner = SpyModel(outputs=[{"tool": "search", "args": {"title": "Ed Wood"}}] * 4)
    cached = CachedChatModel(
        identity="scripted:x", store=SqliteModelCache(tmp_path / "c.db"), load_model=lambda: inner
    )

    def ask(tools: list[dict[str, Any]], title: str) -> AIMessage:
        history = [
            HumanMessage("Question: q"),
            AIMessage("", tool_calls=[{"name": "search", "args": {"title": title}, "id": "a"}]),
            ToolMessage("Observation 1: «same page»", tool_call_id="a", name="search"),
        ]
        reply = cached.bind_tools(tools).invoke(history, config={"metadata": {CALL_INDEX_KEY: 1}})
        assert isinstance(reply, AIMessage)
        return reply

    first = ask(TOOLS, "Ed Wood")
    assert first.tool_calls[0]["name"] == "search" and first.tool_calls[0]["args"] == {
        "title": "Ed Wood"
    }
    assert inner.tools[-1] == TOOLS  # the real model got the tools
    assert ask(TOOLS, "Ed Wood").tool_calls == first.tool_calls and cached.hits == 1
    ask(TOOLS[:2], "Ed Wood")  # other tools bound: another entry
    ask(TOOLS, "Scott Derrickson")  # another call in the history, same observation
    assert cached.misses == 3 and len(inner.calls) == 3


def test_ask_with_the_tools_protocol_replays_from_the_model_cache(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap.db")
    script = tmp_path / "s.json"
    script.write_text(json.dumps(TOOLS_RUN))
    cache = tmp_path / "cache.db"
    runner = CliRunner()
    base = [
        *("ask", QUESTION, "--wiki", str(snapshot), "--json", "--model-cache", str(cache)),
        *("--model", f"scripted:{script}", "--protocol", "tools"),
    ]
    first = runner.invoke(app, [*base, "--db", str(tmp_path / "a.db")])
    assert first.exit_code == 0, first.output
    assert "0 hits, 4 misses" in first.stderr
    script.write_text(json.dumps([{"tool": "finish", "args": {"answer": "no"}}] * 4))
    second = runner.invoke(app, [*base, "--db", str(tmp_path / "b.db")])
    assert second.exit_code == 0, second.output
    assert "4 hits, 0 misses" in second.stderr
    replayed, recorded = json.loads(second.stdout), json.loads(first.stdout)
    assert replayed["answer"] == recorded["answer"] == "yes"
    assert [s["action"] for s in replayed["trajectory"]] == [
        s["action"] for s in recorded["trajectory"]
    ]


def test_a_corrupt_cache_row_is_named_with_its_file_and_fixed_by_deleting_it(
    tmp_path: Path, data_dir: Path
) -> None:
    snapshot = write_snapshot(tmp_path / "snap.db")
    script = tmp_path / "s.json"
    script.write_text(json.dumps(GOOD_RUN))
    cache = tmp_path / "cache.db"
    runner = CliRunner()
    base = [
        *("ask", QUESTION, "--wiki", str(snapshot), "--model", f"scripted:{script}"),
        *("--model-cache", str(cache), "--thread-id", "t1"),
    ]
    assert runner.invoke(app, [*base, "--db", str(tmp_path / "a.db")]).exit_code == 0
    with sqlite3.connect(cache) as conn:
        conn.execute("UPDATE wikireact_model_cache SET reply = '{\"cont' WHERE rowid = 1")
    db = tmp_path / "b.db"
    broken = runner.invoke(app, [*base, "--db", str(db)])
    assert broken.exit_code == 1
    message = " ".join(broken.stderr.split())
    assert f"model cache {cache}: row 1 holds no readable reply" in message
    assert "did not answer" not in message
    assert (
        "delete that row" in message and "once that is fixed, continue with `wikireact" in message
    )
    with sqlite3.connect(cache) as conn:
        conn.execute("DELETE FROM wikireact_model_cache WHERE rowid = 1")
    resumed = runner.invoke(
        app, ["resume", "t1", "--db", str(db), "--model-cache", str(cache), "--json"]
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["answer"] == "yes" and "3 hits, 1 misses" in resumed.stderr


def test_a_groq_tools_protocol_episode_is_recorded_and_replayed_offline(tmp_path: Path) -> None:
    """Groq's client (against a local stand-in) records tool calls; the replay needs no server."""
    from fault_server import FaultServer, groq_tool_reply
    from langchain_groq import ChatGroq
    from langgraph.checkpoint.memory import InMemorySaver
    from pydantic import SecretStr
    from support import PAGES, thread

    from wikireact import Context, MemorySource, build_graph

    def episode(load_model: Any) -> dict[str, Any]:
        model = CachedChatModel(
            identity="groq:qwen/qwen3.6-27b",
            store=SqliteModelCache(tmp_path / "cache.db"),
            load_model=load_model,
        )
        graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
        graph.invoke({"question": QUESTION}, thread(), context=Context(protocol="tools"))
        return dict(graph.get_state(thread()).values)

    with FaultServer(groq_tool_reply, lambda n: None) as server:
        recorded = episode(
            lambda: ChatGroq(
                model="qwen/qwen3.6-27b",
                api_key=SecretStr("test-key"),
                base_url=server.url,
                timeout=5.0,
                max_retries=0,
            )
        )
        assert server.count == 4
    replayed = episode(lambda: pytest.fail("the replay must not load the model"))
    assert replayed["answer"] == recorded["answer"] == "yes"
    assert replayed["trajectory"] == recorded["trajectory"]
    assert replayed["trajectory"][1]["calls"] == [
        {"id": "call_groq_1", "name": "search", "args": {"title": "Ed Wood"}}
    ]
    assert [a["input_tokens"] for a in replayed["audit"]] == [100, 101, 102, 103]


def open_files_named(path: Path) -> list[str]:
    import os

    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
def test_ask_and_eval_close_their_model_cache(files: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, snapshot = files
    script = tmp_path / "s.json"
    script.write_text(json.dumps(GOOD_RUN))
    cache = tmp_path / "cache.db"
    runner = CliRunner()
    common = ["--model", f"scripted:{script}", "--wiki", str(snapshot), "--model-cache", str(cache)]
    asked = runner.invoke(app, ["ask", QUESTION, *common, "--db", str(tmp_path / "t.db")])
    assert asked.exit_code == 0, asked.output
    assert open_files_named(cache) == []
    evaluated = runner.invoke(
        app, ["eval", str(dataset), *common, "--out", str(tmp_path / "run"), "--limit", "1"]
    )
    assert evaluated.exit_code == 0, evaluated.output
    assert open_files_named(cache) == []
