"""The trajectory browser at full scale: 500 questions x 7 methods (one seed), synthetic runs.

Builds seven run folders shaped like real ones (ReAct/Act episodes of 3-8 steps with
page-sized observations from four pages per question, shared by the methods as on a real
run; CoT/Standard answers without trajectories), then times `eval report --html` and `--plot`
on them and prints the page's size. When Chromium is installed it also times rendering
the page headless (`--dump-dom`).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from table import Row, print_rows

from wikireact.eval.categories import categorize
from wikireact.eval.html_report import write_html
from wikireact.eval.methods import METHODS
from wikireact.eval.metrics import summarize
from wikireact.eval.runs import load_runs

QUESTIONS = 500
PAGES_PER_QUESTION = 4
TARGET_MB = 10.0
TARGET_GENERATE_S = 5.0
WORDS = (
    "the of and in a to was is for on as by with he that at from his it an were are which this be "
    "film born american city river album team university war village football county"
).split()


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _pages(question: int) -> list[str]:
    """Return the pages a question leads to: the same for every method, as on a real run."""
    rng = random.Random(question)
    return [" ".join(_sentence(rng, 20) for _ in range(5)) for _ in range(PAGES_PER_QUESTION)]


def _records(method: str, rng: random.Random) -> list[dict]:
    records = []
    for q in range(QUESTIONS):
        gold = f"Answer {q}"
        pages = _pages(q)
        trajectory = []
        if method in ("react", "act", "react-cot-sc", "cot-sc-react"):
            for _ in range(rng.randint(2, 7)):
                kind = rng.choices(["executed", "invalid", "repeat"], [8, 1, 1])[0]
                trajectory.append(
                    {
                        "thought": "" if method == "act" else _sentence(rng, 18),
                        "action": f"Search[Page {rng.randrange(99)}]",
                        "kind": kind,
                        "observation": rng.choice(pages),
                        "raw": "",
                    }
                )
            trajectory.append(
                {
                    "thought": _sentence(rng, 10),
                    "action": f"Finish[{gold}]",
                    "kind": "finish",
                    "observation": "",
                    "raw": "",
                }
            )
        correct = rng.random() < 0.3
        answer = gold if correct else f"Wrong {q}"
        record = {
            "id": f"q{q:04d}",
            "seed": 0,
            "method": method,
            "question": _sentence(rng, 16) + "?",
            "gold": gold,
            "answer": answer,
            "em": float(correct),
            "f1": float(correct),
            "status": "finished",
            "steps": len(trajectory),
            "invalid_steps": 0,
            "model_calls": 1,
            "input_tokens": 100,
            "output_tokens": 10,
            "wiki_requests": 1,
            "latency_s": 1.0,
            "supported": None,
            "switched": False,
            "votes": {"votes": 12, "samples": 21, "answers": [answer] * 21}
            if "sc" in method
            else None,
            "trajectory": trajectory,
        }
        record["category"] = categorize(record)
        records.append(record)
    return records


def make_runs(root: Path) -> list[Path]:
    """Write seven synthetic finished runs under `root`."""
    rng = random.Random(17)
    folders = []
    for method in METHODS:
        folder = root / method
        folder.mkdir(parents=True)
        records = _records(method, rng)
        with (folder / "trajectories.jsonl").open("w", encoding="utf-8") as sink:
            sink.writelines(json.dumps(r) + "\n" for r in records)
        report = {
            "settings": {"method": method, "model": "synthetic", "seeds": 1},
            "metrics": summarize(records),
        }
        (folder / "report.json").write_text(json.dumps(report))
        folders.append(folder)
    return folders


def _render_seconds(page: Path, profile: Path) -> float | None:
    browser = shutil.which("chromium")
    if not browser:
        return None
    start = time.perf_counter()
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=300,
        check=True,
    )
    return time.perf_counter() - start


def run() -> dict[str, float | None]:
    """Build the runs, write the page and the plot, and return the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        folders = make_runs(Path(tmp) / "runs")
        page = Path(tmp) / "cmp.html"
        start = time.perf_counter()
        write_html(load_runs(folders), page, paper=True)
        generate = time.perf_counter() - start
        start = time.perf_counter()
        from wikireact.eval.plot import write_plot

        write_plot(load_runs(folders), Path(tmp) / "cmp.png", paper=True)
        plot = time.perf_counter() - start
        jsonl = sum((f / "trajectories.jsonl").stat().st_size for f in folders)
        return {
            "size_mb": page.stat().st_size / 1e6,
            "jsonl_mb": jsonl / 1e6,
            "generate_s": generate,
            "plot_s": plot,
            "render_s": _render_seconds(page, Path(tmp) / "profile"),
        }


def rows() -> list[Row]:
    """Return the figures as table rows."""
    f = run()
    size, generate = float(f["size_mb"] or 0), float(f["generate_s"] or 0)
    out = [
        Row(
            f"html page, 500 q x 7 methods (jsonl: {float(f['jsonl_mb'] or 0):.1f} MB)",
            size,
            "MB",
            f"<= {TARGET_MB:g}",
            size <= TARGET_MB,
        ),
        Row(
            "html page generation, 500 q x 7 methods",
            generate,
            "s",
            f"<= {TARGET_GENERATE_S:g}",
            generate <= TARGET_GENERATE_S,
        ),
        Row("plot (png), 7 runs", float(f["plot_s"] or 0), "s"),
    ]
    if f["render_s"] is not None:
        out.append(Row("html page, headless chromium load + dump", float(f["render_s"]), "s"))
    return out


if __name__ == "__main__":
    sys.exit(print_rows(rows()))
