"""Test helpers shared by the suite: a small Wikipedia, scripted episodes, a spy model, snapshots.

Test modules import these (`from support import ...`); fixtures built on them live in conftest.py.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from pydantic import Field, PrivateAttr

from wikireact import ScriptedChatModel
from wikireact.eval.harness import EvalConfig
from wikireact.eval.methods import Method
from wikireact.eval.run import run_eval
from wikireact.models.scripted import ScriptOutput
from wikireact.wiki.importing.importer import import_file
from wikireact.wiki.snapshot import SnapshotDatabase, SnapshotSource

PAGES = {
    "Scott Derrickson": (
        "Scott Derrickson (born July 16, 1966) is an American director, screenwriter and producer. "
        "He lives in Los Angeles, California. He is best known for directing horror films such as "
        "Sinister. Derrickson was born in Denver, Colorado. He studied at Biola University."
    ),
    "Ed Wood": (
        "Edward Davis Wood Jr. (October 10, 1924 – December 10, 1978) was an American filmmaker, "
        "actor, and author. In the 1950s, Wood made several low-budget films. "
        "Wood was born in Poughkeepsie, New York. He served in the U.S. Marine Corps. "
        "He died in Los Angeles."
    ),
}

WAIT_LIMIT_S = 300
"""The longest a test waits for a process to reach a state (a hang, not slowness, fails it)."""
QUESTION = "Were Scott Derrickson and Ed Wood of the same nationality?"

GOOD_RUN: list[ScriptOutput] = [
    "Thought 1: I need Scott Derrickson's nationality.\nAction 1: Search[Scott Derrickson]",
    "Thought 2: He is American. Now Ed Wood.\nAction 2: Search[Ed Wood]",
    "Thought 3: Where was Wood born?\nAction 3: Lookup[born]",
    "Thought 4: Both are American.\nAction 4: Finish[yes]",
]

REWOO_LLM_RUN: list[ScriptOutput] = [
    "Plan: Derrickson.\n#E1 = Search[Scott Derrickson]\n"
    "Plan: his nationality.\n#E2 = LLM[Which nationality does #E1 give?]\n"
    "Plan: Wood.\n#E3 = Search[Ed Wood]\n"
    "Plan: his nationality.\n#E4 = LLM[Which nationality does #E3 give?]",
    "American.",
    "American.",
    "Thought: same.\nFinish[yes]",
]
"""A ReWOO run with LLM steps. Calls: 0 the plan (4 steps), 1 and 2 the LLM steps (one round,
side by side), 3 the solver."""
TOOLS_RUN: list[ScriptOutput] = [
    {
        "tool": "search",
        "args": {"title": "Scott Derrickson"},
        "content": "Thought 1: I need Scott Derrickson's nationality.",
    },
    {"tool": "search", "args": {"title": "Ed Wood"}, "content": "He is American. Now Ed Wood."},
    {"tool": "lookup", "args": {"keyword": "born"}, "content": "Where was Wood born?"},
    {"tool": "finish", "args": {"answer": "yes"}, "content": "Both are American."},
]
"""GOOD_RUN's steps as tool calls (the tools protocol)."""

EVAL_DATA = [
    {
        "_id": "q1",
        "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
        "answer": "yes",
    },
    {"_id": "q2", "question": "Where was Ed Wood born?", "answer": "Poughkeepsie, New York"},
    {"_id": "q3", "question": "Which city does Scott Derrickson live in?", "answer": "Los Angeles"},
    {"_id": "q4", "question": "Is Ed Wood a director?", "answer": "no"},
]
"""A four-question dataset over PAGES (the `eval_files` fixture writes it)."""

EVAL_SCRIPT: list[ScriptOutput] = [
    "Thought: look him up.\nAction: Search[Scott Derrickson]",
    "Thought: next.\nAction: Serch[Ed Wood]",
    "Thought: again.\nAction: Search[Ed Wood]",
    "Thought: born?\nAction: Lookup[born]",
    "Thought: done.\nAction: Finish[Poughkeepsie, New York]",
]
"""One episode per question: an invalid step, a repeat, then the same answer for every question."""

FEVER_PAGES = {
    "Nikolaj Coster-Waldau": (
        "Nikolaj William Coster-Waldau (born 27 July 1970) is a Danish actor and producer. "
        "He played Jaime Lannister in the HBO series Game of Thrones. "
        "He played a detective in the Fox television series New Amsterdam (2008). "
        "He appeared in the 2009 Fox television film Virtuality."
    ),
    "Stranger Things": (
        "Stranger Things is an American science fiction horror television series. "
        "It is set in the fictional town of Hawkins, Indiana, in the 1980s."
    ),
}
"""Pages for FEVER claims (written for the tests)."""
CLAIM = "Nikolaj Coster-Waldau worked with the Fox Broadcasting Company."
FEVER_RUN: list[ScriptOutput] = [
    "Thought 1: I search him.\nAction 1: Search[Nikolaj Coster-Waldau]",
    "Thought 2: Fox films: supported.\nAction 2: Finish[supported]",
]
"""A FEVER episode for CLAIM that finishes with a label in another form (`supported`)."""
FEVER_DATA = [
    {
        "id": 75397,
        "verifiable": "VERIFIABLE",
        "label": "SUPPORTS",
        "claim": CLAIM,
        "evidence": [[[92206, 104971, "Nikolaj_Coster-Waldau", 7]]],
    },
    {
        "id": 150448,
        "verifiable": "VERIFIABLE",
        "label": "REFUTES",
        "claim": "Stranger Things is set in Bloomington, Indiana.",
        "evidence": [[[174271, 187498, "Stranger_Things", 1]]],
    },
    {
        "id": 214861,
        "verifiable": "NOT VERIFIABLE",
        "label": "NOT ENOUGH INFO",
        "claim": "Nikolaj Coster-Waldau likes sailing.",
        "evidence": [[[255136, None, None, None]]],
    },
]
"""Three claims over FEVER_PAGES in FEVER's JSON-lines form (one of each label)."""

MANY_PAGES = {
    f"Page {i}": " ".join(f"Sentence {j} of page {i} is about topic{j % 9}." for j in range(30))
    for i in range(200)
}
"""Pages for long episodes (`distinct_steps`)."""


def distinct_steps(steps: int) -> list[ScriptOutput]:
    """A `steps`-step episode over MANY_PAGES: a new page every 4 steps, Lookups in between,
    Finish last; no step repeats another, so every delta channel keeps growing."""
    out: list[ScriptOutput] = [
        f"Thought: step {k}.\nAction: Search[Page {k // 4}]"
        if k % 4 == 0
        else f"Thought: step {k}.\nAction: Lookup[topic{k % 4}]"
        for k in range(steps - 1)
    ]
    return [*out, "Thought: done.\nAction: Finish[topic1]"]


def flat(text: str) -> str:
    """Undo rich's line wrapping."""
    return " ".join(text.split())


def eval_config(dataset: Path, snapshot: Path, method: Method = "react", **kw: Any) -> EvalConfig:
    """An evaluation of `dataset` over `snapshot` with the scripted model, four questions at a time."""
    return EvalConfig(
        dataset=str(dataset),
        method=method,
        model="scripted",
        wiki=str(snapshot),
        sample_seed=None,
        **{"concurrency": 4, **kw},
    )


def snapshot_eval(
    dataset: Path,
    snapshot: Path,
    out: Path,
    model: BaseChatModel,
    method: Method = "react",
    *,
    resume: bool = False,
    **kw: Any,
) -> dict[str, Any]:
    """Run (`resume`) the `eval_config` evaluation with `model` over `snapshot` into `out`; return its report."""
    return run_eval(
        eval_config(dataset, snapshot, method, **kw),
        out,
        resume=resume,
        model=model,
        wiki=SnapshotSource.open(snapshot),
    )


def thread(thread_id: str = "t1") -> RunnableConfig:
    """Return the run config that names a checkpointed thread."""
    return {"configurable": {"thread_id": thread_id}}


def write_script(
    tmp_path: Path, outputs: Sequence[Any], name: str = "script.json", delay_s: float = 0
) -> str:
    """Write a scripted model file and return its `--model` value."""
    path = tmp_path / name
    path.write_text(json.dumps({"outputs": list(outputs), "delay_s": delay_s}))
    return f"scripted:{path}"


def wait_for_records(records: Path, count: int, process: subprocess.Popen[str]) -> None:
    """Wait until `process` has written `count` lines to `records` (a state, not a time).

    Fails with the process's stderr if it exits first; gives up after `WAIT_LIMIT_S`.
    """
    deadline = time.monotonic() + WAIT_LIMIT_S
    while not (records.exists() and records.read_text().count("\n") >= count):
        if process.poll() is not None:
            raise AssertionError(f"exited ({process.returncode}) first: {process.communicate()[1]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{records} did not reach {count} lines in {WAIT_LIMIT_S} s")
        time.sleep(0.05)


def ask_args(
    snapshot: Path, tmp_path: Path, outputs: Sequence[Any], name: str = "script.json"
) -> list[str]:
    """Return `wikireact ask QUESTION` arguments with a scripted model and `snapshot` as Wikipedia."""
    return [
        "ask",
        QUESTION,
        "--model",
        write_script(tmp_path, outputs, name),
        "--wiki",
        str(snapshot),
    ]


def eval_args(dataset: Path, snapshot: Path, script: Path, out: Path) -> list[str]:
    """Return `wikireact eval DATASET` arguments with a scripted model file and `snapshot`."""
    return [
        "eval",
        str(dataset),
        "--model",
        f"scripted:{script}",
        "--wiki",
        str(snapshot),
        "--out",
        str(out),
    ]


def write_snapshot(path: Path, pages: Mapping[str, str] = PAGES) -> Path:
    """Build a snapshot file at `path` holding `pages` (title -> text), as `snapshot import` does."""
    jsonl = path.with_suffix(".jsonl")
    jsonl.write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in pages.items()))
    with closing(SnapshotDatabase.create(path)) as store:
        import_file(jsonl, store)
    return path


class SpyModel(ScriptedChatModel):
    """A scripted model that records every call.

    Records the messages of each call (`calls`; `texts` and `prompts` as text), the tools bound to it
    (`tools`), and the most calls in flight at once (`peak`). Fails every call after `fail_after`
    calls when set; with `honour_stop=False` it ignores stop sequences, like some real servers.
    """

    fail_after: int | None = None
    honour_stop: bool = True
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    tools: list[Any] = Field(default_factory=list)
    peak: int = 0
    _calls: int = PrivateAttr(default=0)
    _in_flight: int = PrivateAttr(default=0)
    _gate: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def texts(self) -> list[list[str]]:
        """Each call's message texts."""
        return [[str(m.content) for m in messages] for messages in self.calls]

    @property
    def prompts(self) -> list[str]:
        """Each call's messages joined into one text."""
        return ["\n".join(texts) for texts in self.texts]

    def _respond(
        self,
        index: int,
        messages: Sequence[BaseMessage],
        stop: list[str] | None,
        outputs: list[ScriptOutput] | None = None,
    ) -> ChatResult:
        with self._gate:
            self._calls += 1
            self.calls.append(list(messages))
            if self.fail_after is not None and self._calls > self.fail_after:
                raise ConnectionError("model down")
        return super()._respond(index, messages, stop if self.honour_stop else None, outputs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._enter(kwargs)
        try:
            return super()._generate(messages, stop, run_manager, **kwargs)
        finally:
            self._leave()

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._enter(kwargs)
        try:
            return await super()._agenerate(messages, stop, run_manager, **kwargs)
        finally:
            self._leave()

    def _enter(self, kwargs: dict[str, Any]) -> None:
        with self._gate:
            self.tools.append(kwargs.get("tools"))
            self._in_flight += 1
            self.peak = max(self.peak, self._in_flight)

    def _leave(self) -> None:
        with self._gate:
            self._in_flight -= 1


class AsyncDelegating:
    """Async saver methods that call the sync ones: LangGraph's conformance suite calls only these.

    Mix in before a sync-only saver (`class S(AsyncDelegating, CompactSqliteSaver)`).
    """

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.get_tuple(config)  # type: ignore[attr-defined]

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in self.list(config, filter=filter, before=before, limit=limit):  # type: ignore[attr-defined]
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.put(config, checkpoint, metadata, new_versions)  # type: ignore[attr-defined]

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)  # type: ignore[attr-defined]

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)  # type: ignore[attr-defined]

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.copy_thread(source_thread_id, target_thread_id)  # type: ignore[attr-defined]

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.prune(thread_ids, strategy=strategy)  # type: ignore[attr-defined]

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.delete_for_runs(run_ids)  # type: ignore[attr-defined]


AUDIT_TIMES = ("started_at", "ended_at", "model_seconds", "wiki_seconds")
"""The wall-clock fields of an audit record: they differ between two runs of one episode."""


def without_times(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return audit records without their wall-clock fields (`AUDIT_TIMES`), to compare runs."""
    return [{k: v for k, v in r.items() if k not in AUDIT_TIMES} for r in records]


def untimed_result(stdout: str, **changes: Any) -> dict[str, Any]:
    """Return a `--json` result without its steps' wall times, with `changes`, to compare runs."""
    result = json.loads(stdout)
    return {**result, "trajectory": without_times(result.get("trajectory", [])), **changes}


METRIC_TIMES = (
    "latency_mean_s",
    "latency_p95_s",
    "step_model_mean_s",
    "step_model_p95_s",
    "step_wiki_mean_s",
    "step_wiki_p95_s",
)
"""An evaluation report's metrics that are wall times: they differ from run to run."""
