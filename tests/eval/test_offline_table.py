"""`make bench-offline` (bench/offline_table.py) wires agents, sets and `wikireact eval run` together.

A scripted model stands in for the embedded one (the real table takes hours of CPU): two
questions of the multi-hop set and of the FEVER claims, ReAct and ReWOO, over a small
snapshot. A second call with the same `--out` reuses the finished runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import write_script, write_snapshot

from wikireact.models.scripted import ScriptOutput

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPT: list[ScriptOutput] = [
    "Plan: read his page.\n#E1 = Search[Ed Wood]",  # ReWOO's plan; ReAct: an invalid step
    "Thought: he was American.\nAction: Finish[American]",  # a FEVER claim: no label, again
    "Thought: the page says so.\nAction: Finish[SUPPORTS]",
]


def _table(out: Path, model: str, wiki: Path) -> subprocess.CompletedProcess[str]:
    command = [
        *(sys.executable, str(BENCH / "offline_table.py"), "--sets", "multi,fever"),
        *("--agents", "react,rewoo", "--limit", "2", "--out", str(out)),
        *("--model", model, "--wiki", str(wiki)),
    ]
    return subprocess.run(command, cwd=BENCH, capture_output=True, text=True, timeout=600)


def test_the_offline_table_runs_eval_per_agent_and_set_and_reuses_finished_runs(
    tmp_path: Path,
) -> None:
    out, model = tmp_path / "runs", write_script(tmp_path, SCRIPT)
    wiki = write_snapshot(tmp_path / "wiki.db")
    first = _table(out, model, wiki)
    assert first.returncode == 0, first.stderr
    rows = {
        line.split(" | ")[0].strip("| "): line.split(" | ") for line in first.stdout.splitlines()
    }
    assert {"multi/react", "multi/rewoo", "fever/react", "fever/rewoo"} <= set(rows)
    assert rows["multi/rewoo"][4] == "100%" and rows["multi/react"][4] == "-"  # valid plans
    assert rows["fever/react"][2] == "100.0%"  # FEVER: label accuracy, after one invalid label
    for set_name, task in (("multi", "hotpotqa"), ("fever", "fever")):
        for agent in ("react", "rewoo"):
            settings = json.loads((out / set_name / agent / "report.json").read_text())["settings"]
            assert (settings["method"], settings["task"], settings["limit"]) == (agent, task, 2)
            assert settings["order"] == "file"
    reports = sorted(out.glob("*/*/report.json"))
    written = [path.stat().st_mtime_ns for path in reports]
    again = _table(out, model, wiki)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert [path.stat().st_mtime_ns for path in reports] == written  # nothing ran again
