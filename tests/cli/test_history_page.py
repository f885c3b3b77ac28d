"""`wikireact history THREAD --html FILE`: the thread's page, rendered by a real headless Chromium.

Chromium runs the page's own script; what is shown is set through the page's address
(`#step=N&branch=ID&node=ID`), the state its buttons, index and tree write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import closing
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from browser import dump_dom
from support import GOOD_RUN, MANY_PAGES, PAGES, QUESTION, distinct_steps, write_script
from support import write_snapshot as snapshot_of
from test_cli_agents import PE_RUN, REWOO_RUN
from typer.testing import CliRunner

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.cli.app import app
from wikireact.cli.hints import resume_command
from wikireact.history import CheckpointSummary, list_checkpoints
from wikireact.storage.sqlite.threads import SqliteThreads

runner = CliRunner()
RUNS: dict[str, Sequence[Any]] = {
    "react": GOOD_RUN,
    "rewoo": REWOO_RUN,
    "plan-execute": PE_RUN,
    "reflexion": GOOD_RUN,
}
HOSTILE = (
    '</script><b id="pwned">x</b><img src=x onerror="document.body.dataset.pwned=1">'
    "<script>document.body.dataset.pwned=1</script><!--"
)
SHOWN = ("thought", "action", "observation", "approval", "command")
"""Ids of the page's elements that hold one text each."""


class Page(HTMLParser):
    """The parts of the rendered page the tests look at."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.body: dict[str, str | None] = {}
        self.index: list[str | None] = []
        self.step: str | None = None
        self.nodes: list[dict[str, str | None]] = []
        self.forks = 0
        self.records = 0
        self.texts: dict[str, str] = {}
        self.question = ""
        self._capture: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        ident = a.get("id")
        if ident:
            self.ids.add(ident)
        if tag == "body":
            self.body = a
        elif tag == "li" and a.get("data-step") is not None:
            self.index.append(a["data-step"])
        elif ident == "step":
            self.step = a.get("data-step")
        elif tag == "li" and "node" in classes:
            self.nodes.append(a)
        elif tag == "li" and "fork" in classes:
            self.forks += 1
        elif "record" in classes:
            self.records += 1
        if ident in SHOWN or ident in ("question", "meta"):
            self._capture = ident
            self.texts[ident] = ""

    def handle_endtag(self, tag: str) -> None:
        self._capture = None

    def handle_data(self, data: str) -> None:
        if self._capture:
            self.texts[self._capture] += data
            if self._capture == "question":
                self.question += data


def render(page: Path, fragment: str, tmp_path: Path) -> Page:
    """Load the page in headless Chromium and parse the DOM its script built."""
    dom = Page()
    dom.feed(dump_dom(page, fragment, tmp_path / "profile"))
    assert dom.body.get("data-ready") == "true"  # the page's script ran to its end
    return dom


def ask(tmp_path: Path, db: Path, snapshot: Path, thread: str, agent: str, question: str) -> None:
    result = runner.invoke(
        app,
        [
            "ask",
            question,
            "--agent",
            agent,
            "--model",
            write_script(tmp_path, RUNS[agent], name=f"{thread}.json"),
            "--wiki",
            str(snapshot),
            "--db",
            str(db),
            "--thread-id",
            thread,
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output


def write_page(db: Path, thread: str, target: Path) -> Path:
    result = runner.invoke(app, ["history", thread, "--db", str(db), "--html", str(target)])
    assert result.exit_code == 0, result.output
    return target


def audit_of(db: Path, thread: str) -> list[dict[str, Any]]:
    result = runner.invoke(app, ["history", thread, "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    steps: list[dict[str, Any]] = json.loads(result.stdout)["steps"]
    return steps


def checkpoints_of(db: Path, thread: str) -> list[CheckpointSummary]:
    with closing(SqliteThreads(db, read_only=True)) as store:
        return list_checkpoints(store.saver, thread)


@pytest.mark.parametrize("agent", list(RUNS))
def test_every_agents_thread_steps_through_its_page(
    agent: str, tmp_path: Path, snapshot_db: Path
) -> None:
    db = tmp_path / "threads.db"
    ask(tmp_path, db, snapshot_db, "t", agent, QUESTION)
    page = write_page(db, "t", tmp_path / "t.html")
    steps, checkpoints = audit_of(db, "t"), checkpoints_of(db, "t")
    middle = checkpoints[len(checkpoints) // 2].checkpoint_id
    dom = render(page, f"#step=2&node={middle}", tmp_path)
    assert dom.question == QUESTION
    assert dom.index == [str(n) for n in range(1, len(steps) + 1)] and dom.step == "2"
    assert dom.texts["thought"] == (steps[1]["thought"] or "—")
    assert dom.texts["observation"] == (steps[1]["observation"] or "—")
    assert dom.texts["approval"] == "not needed"
    assert len(dom.nodes) == len(checkpoints) and dom.forks == 0
    assert dom.texts["command"] == resume_command("t", db, checkpoint=middle)
    assert (dom.records > 0) == (agent != "react")  # a plan, evidence, sub-goals or trials


def test_hostile_text_stays_text(tmp_path: Path) -> None:
    pages = {**PAGES, "Scott Derrickson": f"Scott Derrickson is {HOSTILE} an American director."}
    snapshot = snapshot_of(tmp_path / "hostile.db", pages)
    db = tmp_path / "threads.db"
    ask(tmp_path, db, snapshot, "h", "react", f"Who? {HOSTILE}")
    page = write_page(db, "h", tmp_path / "h.html")
    text = page.read_text()
    assert "<link" not in text and "<script src" not in text and "://" not in text
    assert "Content-Security-Policy" in text and text.count("</script>") == 2
    dom = render(page, "#step=1", tmp_path)
    assert "pwned" not in dom.ids and "data-pwned" not in dom.body
    observation = audit_of(db, "h")[0]["observation"]
    assert dom.texts["observation"] == observation and '<b id="pwned">x</b>' in observation
    assert dom.question == f"Who? {HOSTILE}"


def test_a_forked_thread_shows_its_branches_as_a_tree(tmp_path: Path, snapshot_db: Path) -> None:
    db = tmp_path / "threads.db"
    ask(tmp_path, db, snapshot_db, "f", "react", QUESTION)
    fork_at = next(c for c in checkpoints_of(db, "f") if c.steps == 2 and c.next == ("reason",))
    forked = runner.invoke(
        app, ["resume", "f", "--db", str(db), "--from", fork_at.checkpoint_id, "--max-steps", "2"]
    )
    assert forked.exit_code == 0, forked.output
    page = write_page(db, "f", tmp_path / "f.html")
    heads = [c.checkpoint_id for c in checkpoints_of(db, "f") if not c.next]
    assert len(heads) == 2  # the original branch ends finished, the fork at its budget
    current = render(page, "", tmp_path)
    assert current.forks == 1 and len(current.index) == 3
    assert [n["data-node"] for n in current.nodes if "head" in (n["class"] or "")] == heads[::-1]
    original = render(page, f"#branch={heads[1]}&step=4", tmp_path)
    assert len(original.index) == 4 and original.step == "4"
    assert original.texts["action"] == "Finish[yes]"


@pytest.fixture(scope="module")
def long_thread(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 1,000-step ReAct thread (about 3,900 checkpoints) and its page."""
    root = tmp_path_factory.mktemp("long")
    db, context = root / "threads.db", Context(max_steps=1000, repetition_limit=1000)
    with closing(SqliteThreads(db)) as store:
        store.register("long", "q", context)
        model = ScriptedChatModel(outputs=distinct_steps(1000))
        graph = build_graph(store.saver, model=model, wiki=MemorySource(MANY_PAGES))
        out = graph.invoke(
            {"question": "q"}, {"configurable": {"thread_id": "long"}}, context=context
        )
        assert out["steps"] == 1000
    return db, write_page(db, "long", root / "long.html")


def test_a_thousand_step_thread_stays_usable(
    long_thread: tuple[Path, Path], tmp_path: Path
) -> None:
    db, page = long_thread
    last = render(page, "#step=1000", tmp_path)
    assert last.index == [str(n) for n in range(1, 1001)] and last.step == "1000"
    assert last.texts["action"] == "Finish[topic1]"
    checkpoints = checkpoints_of(db, "long")
    assert len(last.nodes) == len(checkpoints) > 3000 and last.forks == 0
    middle = checkpoints[2000].checkpoint_id
    picked = render(page, f"#step=500&node={middle}", tmp_path)
    assert picked.step == "500" and picked.texts["thought"] == "step 499."
    assert picked.texts["command"] == resume_command("long", db, checkpoint=middle)
    beyond = render(page, "#step=5000", tmp_path)  # an address past the end shows the last step
    assert beyond.step == "1000"


def test_approval_decisions_and_a_pause_are_shown(tmp_path: Path, snapshot_db: Path) -> None:
    db = tmp_path / "threads.db"
    args = [
        "ask",
        QUESTION,
        "--model",
        write_script(tmp_path, GOOD_RUN),
        "--wiki",
        str(snapshot_db),
    ]
    args += ["--db", str(db), "--thread-id", "a", "--approve", "--reviewer", "ann"]
    paused = runner.invoke(app, args, input="y\nn\nnot yet\n")  # yes, no (why), then no answer
    assert paused.exit_code != 0
    page = write_page(db, "a", tmp_path / "a.html")
    first, second = render(page, "#step=1", tmp_path), render(page, "#step=2", tmp_path)
    assert first.texts["approval"] == "approved by ann"
    assert second.texts["approval"] == "rejected by ann — not yet"
    assert "waiting for approval" in first.texts["meta"]


def test_an_unwritable_page_is_refused_in_one_line(tmp_path: Path, snapshot_db: Path) -> None:
    db = tmp_path / "threads.db"
    ask(tmp_path, db, snapshot_db, "u", "react", QUESTION)
    result = runner.invoke(
        app, ["history", "u", "--db", str(db), "--html", str(tmp_path / "no" / "such" / "p.html")]
    )
    assert result.exit_code == 2 and "cannot write" in result.output
    assert "Traceback" not in result.output
