"""The trajectory browser (`eval report --html`) rendered by a real headless Chromium.

Chromium runs the page's own script; filters and opened questions are set through the
page's address (`#tag=...&open=...`), the same state the filter controls write.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser import dump_dom
from test_report import make_runs
from typer.testing import CliRunner

from wikireact.cli.app import app


class Dom(HTMLParser):
    """The parts of the rendered page the tests look at."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[dict[str, str | None]] = []
        self.rows: list[dict[str, str | None]] = []
        self.trajectories = 0
        self.kinds: list[str] = []
        self.ids: set[str] = set()
        self.shown: str | None = None
        self.marks: list[str] = []
        self._in_kind = False
        self._in_mark = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "section" and "q" in classes:
            self.sections.append(a)
        elif tag == "tr" and "result" in classes:
            self.rows.append(a)
        elif "trajectory" in classes:
            self.trajectories += 1
        elif a.get("id") == "shown":
            self.shown = a.get("data-count")
        self._in_kind = "kind" in classes
        self._in_mark = tag == "mark"

    def handle_data(self, data: str) -> None:
        if self._in_mark:
            self.marks.append(data)
            self._in_mark = False
        if self._in_kind:
            self.kinds.append(data.split(" · ")[-1])
            self._in_kind = False


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    runs = make_runs(root)
    # hostile text in a record must stay text on the page
    records = runs[0] / "trajectories.jsonl"
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    lines[0]["answer"] = '</script><b id="pwned">x</b><!--'
    records.write_text("".join(json.dumps(r) + "\n" for r in lines))
    target = root / "cmp.html"
    result = CliRunner().invoke(
        app, ["eval", "report", *map(str, runs), "--paper", "--html", str(target)]
    )
    assert result.exit_code == 0, result.output
    return target


def render(page: Path, fragment: str, tmp_path: Path) -> Dom:
    """Load the page in headless Chromium and parse the DOM its script built."""
    dom = Dom()
    dom.feed(dump_dom(page, fragment, tmp_path / "profile"))
    return dom


def visible(items: list[dict[str, str | None]]) -> list[dict[str, str | None]]:
    return [item for item in items if "hidden" not in item]


def test_page_lists_every_question_and_run(page: Path, tmp_path: Path) -> None:
    dom = render(page, "", tmp_path)
    assert len(dom.sections) == 4 and len(visible(dom.sections)) == 4
    assert len(dom.rows) == 4 * 3 and len(visible(dom.rows)) == 12
    assert {r["data-run"] for r in dom.rows} == {"0", "1", "2"}
    assert dom.shown == "4"
    assert "pwned" not in dom.ids  # the hostile answer stayed text
    assert dom.trajectories == 0  # nothing opened yet


def test_filters_by_tag_status_and_run(page: Path, tmp_path: Path) -> None:
    correct = render(page, "#tag=correct", tmp_path)
    assert [s["id"] for s in visible(correct.sections)] == ["q-q2"] and correct.shown == "1"
    matching = [r for r in visible(correct.rows) if "other" not in (r.get("class") or "")]
    assert {r["data-tag"] for r in matching} == {"correct"} and len(matching) == 2
    assert len(visible(correct.rows)) == 12  # rows of hidden questions are not hidden themselves
    none = render(page, "#run=2&status=finished", tmp_path)  # the CoT run never finishes an episode
    assert none.shown == "0" and not visible(none.sections)
    cot = render(page, "#run=2", tmp_path)
    assert {r["data-run"] for r in visible(cot.rows)} == {"2"} and cot.shown == "4"


def test_a_question_opens_to_side_by_side_trajectories(page: Path, tmp_path: Path) -> None:
    opened = render(page, "#open=q2", tmp_path)
    assert opened.trajectories == 3  # react, act, cot side by side
    assert {"executed", "invalid", "finish"} <= set(opened.kinds)
    one = render(page, "#open=q2&run=1", tmp_path)
    assert one.trajectories == 1


def test_page_needs_no_network(page: Path) -> None:
    text = page.read_text()
    assert "<link" not in text and "<script src" not in text and "<img" not in text
    assert "url(" not in text.split('<script id="data"')[0]
    assert (
        "http://" not in text.split('<script id="data"')[0]
        and "https://" not in text.split('<script id="data"')[0]
    )


@pytest.fixture(scope="module")
def odd_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs whose data once blanked the page: a NaN score, a method named `constructor`, an id with `,`."""
    root = tmp_path_factory.mktemp("odd")
    runs = make_runs(root)
    records = runs[0] / "trajectories.jsonl"
    lines = sorted(
        (json.loads(line) for line in records.read_text().splitlines()), key=lambda r: r["id"]
    )
    lines[0]["em"] = float("nan")
    lines[1]["f1"] = float("inf")
    lines[2]["id"] = "a,b"  # was q3
    lines[3]["id"] = "q1,q2"  # was q4; the ids of two other questions, joined
    records.write_text("".join(json.dumps(r) + "\n" for r in lines))  # bare NaN, as Python writes
    report = json.loads((runs[1] / "report.json").read_text())
    report["settings"]["method"] = "constructor"
    report["metrics"]["mean"]["em"] = float("nan")
    (runs[1] / "report.json").write_text(json.dumps(report))
    target = root / "odd.html"
    result = CliRunner().invoke(
        app, ["eval", "report", *map(str, runs), "--paper", "--html", str(target)]
    )
    assert result.exit_code == 0, result.output
    return target


def test_odd_values_do_not_blank_the_page(odd_page: Path, tmp_path: Path) -> None:
    dom = render(odd_page, "", tmp_path)
    assert len(dom.sections) == 6 and dom.shown == "6"  # q1-q4 and the two renamed ids
    assert len(dom.rows) == 12


def test_a_question_id_with_a_comma_reopens_from_the_address(
    odd_page: Path, tmp_path: Path
) -> None:
    # what the page writes for an opened question (URLSearchParams encodes the comma)
    opened = render(odd_page, "#open=a%2Cb", tmp_path)
    assert opened.trajectories == 1
    both = render(odd_page, "#open=a%2Cb&open=q1%2Cq2", tmp_path)
    assert both.trajectories == 2
    # an address written before ids were encoded: a list joined with "," (an id matching
    # the whole value first, as above)
    legacy = render(odd_page, "#open=q2,q3", tmp_path)
    assert legacy.trajectories == 3 + 2


def test_the_sentences_an_answer_cites_are_marked_in_its_observations(
    page: Path, tmp_path: Path
) -> None:
    opened = render(page, "#open=q2", tmp_path)
    # react and act cite the Search result that showed the answer; cot has no trajectory
    assert opened.marks == ["Wood was born in Poughkeepsie, New York."] * 2
