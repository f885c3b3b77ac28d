"""The served graph reads its stored checkpoints as data (issue 34 item 1).

`wikireact studio` runs `langgraph dev`, which keeps checkpoints in its own saver (pickled to
`.langgraph_api/` between runs). A thread's stored answer is replaced there, while the server
is stopped, by a msgpack EXT record naming `os.system` and, in another thread, by a pickled
call of it. Restarted by `wikireact studio`, the server decodes neither: no command runs.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from support import GOOD_RUN, QUESTION, write_snapshot
from test_served import free_port, serving

pytest.importorskip("langgraph_api")
from langgraph_sdk import get_sync_client  # noqa: E402

pytestmark = [pytest.mark.served, pytest.mark.slow]


def run_studio(work: Path, action: Any) -> Any:
    """Run `wikireact studio` in `work` until `action(client)` returns; return what it returned."""
    port = free_port()
    env = {**os.environ, "WIKIREACT_DATA_DIR": str(work / "data")}
    env.pop("GROQ_API_KEY", None)
    env.pop("LANGGRAPH_STRICT_MSGPACK", None)
    argv = [sys.executable, "-m", "wikireact", "studio", "--port", str(port)]
    with serving(argv, work, env, port) as url:
        return action(get_sync_client(url=url))


def replace_answers(work: Path, planted: dict[str, tuple[str, bytes]]) -> None:
    """Replace the stored `answer` values of each thread in `planted` (server stopped)."""
    replaced = set()
    for path in (work / ".langgraph_api").glob(".langgraph_checkpoint.*.pckl"):
        with path.open("rb") as f:
            stored = pickle.load(f)  # the test's own file, written by the server it started
        for key in stored:
            if isinstance(key, tuple) and key[0] in planted and "answer" in key:
                stored[key] = planted[key[0]]
                replaced.add(key[0])
        with path.open("wb") as f:
            pickle.dump(stored, f, 2)
    assert replaced == set(planted)


def test_a_planted_type_or_pickle_in_the_served_checkpoints_runs_nothing(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "pages.db")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(GOOD_RUN))
    context = {"model": f"scripted:{script}", "wiki": str(snapshot)}

    def two_threads(client: Any) -> list[str]:
        ids = [client.threads.create()["thread_id"] for _ in range(2)]
        for thread_id in ids:
            done = client.runs.wait(
                thread_id, "agent", input={"question": QUESTION}, context=context
            )
            assert done["answer"] == "yes"
        return ids

    ext_thread, pickle_thread = run_studio(tmp_path, two_threads)
    marker = tmp_path / "PWNED"
    command = ormsgpack.packb(["os", "system", f"touch {marker}"])
    replace_answers(
        tmp_path,
        {
            ext_thread: ("msgpack", ormsgpack.packb(ormsgpack.Ext(0, command))),
            pickle_thread: ("pickle", f"cos\nsystem\n(S'touch {marker}'\ntR.".encode()),
        },
    )

    def read_and_run_both(client: Any) -> list[Any]:
        """Each thread's answer as the state shows it, then as a run continuing it does."""
        answers = []
        for thread_id in (ext_thread, pickle_thread):
            for read in (
                lambda t: client.threads.get_state(t)["values"],
                lambda t: client.runs.wait(t, "agent", input=None, context=context),
            ):
                try:
                    answers.append(read(thread_id).get("answer"))
                except Exception as exc:  # the server may refuse the value instead
                    answers.append(type(exc).__name__)
        return answers

    answers = run_studio(tmp_path, read_and_run_both)
    assert not marker.exists(), answers
    assert 0 not in answers, answers  # os.system's exit status would be the answer
