"""`eval report --html FILE`: one self-contained page to browse every question of every run.

The page (template `browser.html`, inline CSS and JavaScript, no network) lists each
question with its gold answer and each run's answer, EM/F1, status and error category;
it filters by run, status and category, and opens a question's trajectories side by
side. The data go in one JSON block; step texts are stored once and referenced by index,
since the same observation recurs across methods and seeds. A page shows runs of one task:
FEVER's shows claims, gold labels, the label each run gave and accuracy.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from wikireact.errors import EvalError
from wikireact.eval.categories import CATEGORIES, categorize, step_kind
from wikireact.eval.paper import PAPER_LABEL, PAPER_NOTES, PAPER_SCORES
from wikireact.eval.report import run_notes
from wikireact.eval.runs import Run, by_task


@dataclass
class _Texts:
    """A table of distinct strings: each is stored once and referenced by its index."""

    values: list[str] = field(default_factory=lambda: [""])
    index: dict[str, int] = field(default_factory=lambda: {"": 0})

    def ref(self, text: Any) -> int:
        key = "" if text is None else str(text)
        if key not in self.index:
            self.index[key] = len(self.values)
            self.values.append(key)
        return self.index[key]


def _votes(record: dict[str, Any]) -> str | None:
    votes = record.get("votes")
    if isinstance(votes, dict) and "votes" in votes and "samples" in votes:
        return f"{votes['votes']}/{votes['samples']}"
    return None


def _score(value: Any) -> float | None:
    """Return a score as a finite float, or None (shown as a dash) for NaN, Infinity or no number."""
    try:
        score = float(value)
    except (TypeError, ValueError):
        return None
    return score if math.isfinite(score) else None


def _text_or_none(value: Any) -> str | None:
    """Return an answer as text (a non-text answer as its JSON), or None for no answer."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _utf16(text: str) -> int:
    """Return the length of `text` in UTF-16 code units (the page's string offsets)."""
    return len(text.encode("utf-16-le")) // 2


def cited_marks(steps: list[dict[str, Any]], citations: Any) -> dict[int, list[list[int]]]:
    """Per step index, where each sentence the answer cites sits in that step's observation.

    Offsets are UTF-16 code units, as the page's script slices strings; a citation whose
    sentence the observation does not hold (a malformed record) is left out.
    """
    marks: dict[int, list[list[int]]] = {}
    for citation in citations if isinstance(citations, list) else []:
        if not isinstance(citation, dict) or not isinstance(citation.get("step"), int):
            continue
        index, sentence = citation["step"] - 1, str(citation.get("sentence") or "")
        if not sentence or not 0 <= index < len(steps):
            continue
        observation = str(steps[index].get("observation", ""))
        at = observation.find(sentence)
        if at >= 0:
            start = _utf16(observation[:at])
            marks.setdefault(index, []).append([start, start + _utf16(sentence)])
    return marks


def page_data(runs: list[Run], *, paper: bool = False) -> dict[str, Any]:
    """Everything the page shows, as compact JSON-ready data (see the template's script)."""
    groups = by_task(runs)
    if len(groups) > 1:
        raise EvalError("--html shows runs of one task: give HotpotQA and FEVER runs separately")
    task = groups[0][0] if groups else "hotpotqa"
    texts = _Texts()
    questions: list[dict[str, str]] = []
    position: dict[str, int] = {}
    results: list[list[Any]] = []
    trajectories: list[list[list[Any]]] = []
    summaries = []
    for run_index, run in enumerate(runs):
        records = sorted(run.records(), key=lambda r: (str(r["id"]), int(r.get("seed", 0))))
        for record in records:
            qid = str(record["id"])
            if qid not in position:
                position[qid] = len(questions)
                questions.append(
                    {
                        "id": qid,
                        "question": str(record.get("question", "")),
                        "gold": str(record.get("gold", "")),
                    }
                )
            steps = [s for s in record.get("trajectory") or [] if isinstance(s, dict)]
            trajectory_index = -1
            if steps:
                trajectory_index = len(trajectories)
                marks = cited_marks(steps, record.get("citations"))
                trajectories.append(
                    [
                        [
                            step_kind(s),
                            texts.ref(s.get("thought")),
                            texts.ref(s.get("action")),
                            texts.ref(s.get("observation")),
                            *([marks[i]] if i in marks else []),
                        ]
                        for i, s in enumerate(steps)
                    ]
                )
            category = record.get("category")
            results.append(
                [
                    position[qid],
                    run_index,
                    int(record.get("seed", 0)),
                    _text_or_none(record.get("answer")),
                    _score(record.get("em", 0.0)),
                    _score(record.get("f1", 0.0)),
                    str(record.get("status", "?")),
                    category if category in CATEGORIES else categorize(record),
                    trajectory_index,
                    _votes(record),
                ]
            )
        em, f1 = run.metric("em") or (0.0, 0.0), run.metric("f1") or (0.0, 0.0)
        summaries.append(
            {
                "name": run.name,
                "method": run.method,
                "details": " · ".join([run.details, *run_notes(run)]),  # partial, file order
                "questions": run.questions,
                "seeds": run.seeds,
                "em": _score(em[0]),
                "f1": _score(f1[0]),
                "categories": run.categories(),
            }
        )
    return {
        "task": task,
        "runs": summaries,
        "questions": questions,
        "results": results,
        "texts": texts.values,
        "trajectories": trajectories,
        "categories": list(CATEGORIES.items()),
        "paper": {"em": PAPER_SCORES[task], "label": PAPER_LABEL, "note": PAPER_NOTES[task]}
        if paper
        else None,
    }


def render_page(runs: list[Run], *, paper: bool = False) -> str:
    """Return the whole HTML page."""
    template = files("wikireact.eval").joinpath("browser.html").read_text(encoding="utf-8")
    # No NaN or Infinity (not JSON: the page's JSON.parse would fail and leave it blank).
    data = json.dumps(
        page_data(runs, paper=paper), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    # In a <script> block only "</script" could end it early: no "<" reaches the page raw.
    data = data.replace("<", "\\u003c")
    names = ", ".join(f"{run.name} ({run.method})" for run in runs)
    slots = {
        "TITLE": html.escape(f"wikireact evaluation: {len(runs)} runs"),
        "RUNS": html.escape(names),
        "DATA": data,
    }
    return re.sub(r"__(TITLE|RUNS|DATA)__", lambda m: slots[m.group(1)], template)


def write_html(runs: list[Run], path: Path, *, paper: bool = False) -> None:
    """Write the browser page to `path` (text that is not valid Unicode is replaced, not fatal)."""
    page = render_page(runs, paper=paper)
    try:
        path.write_text(page, encoding="utf-8", errors="replace")
    except OSError as exc:
        raise EvalError(f"cannot write {path}: {exc.strerror or exc}") from None
