"""`snapshot import` of hostile JSON: one line naming the file, flat memory, no file left.

Run as a real process: the bug this guards against was a segfault (a 4,301-digit number
in ijson's C backend) and memory growing with the square of the nesting depth.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

MEMORY_LIMIT = 3 * 2**30  # address space: the unfixed reader needed ~1 GB per 40 KB of nesting


def run_import(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run(
        [sys.executable, "-m", "wikireact", "snapshot", "import", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )


HUGE_NUMBER = '[{"context": [["A", [' + "1" * 5000 + "]]]}]"
DEEP = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("number.json", HUGE_NUMBER, "item 1 is not readable"),
        ("deep.json", DEEP, "item 1 is nested too deeply"),
        # deeper than wikireact reads, shallower than 3.11's JSON reader stops: refused alike
        ("deepish.json", "[" + "[" * 150 + "]" * 150 + "]", "item 1 is nested too deeply"),
        (
            "deepish.jsonl",
            '{"title": "A", "text": ' + "[" * 150 + "]" * 150 + "}\n",
            "nested too deeply",
        ),
        ("deep.jsonl", '{"title": "A", "text": ' + DEEP + "}\n", "nested too deeply"),
        ("number.jsonl", '{"title": "A", "text": ' + "9" * 5000 + "}\n", "not readable JSON"),
    ],
)
def test_hostile_json_is_one_line_and_leaves_no_file(
    tmp_path: Path, name: str, content: str, reason: str
) -> None:
    (tmp_path / name).write_text(content)
    result = run_import(name, "--out", "out.db", cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0] and reason in lines[0], result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_hostile_item_after_good_ones_names_its_position(tmp_path: Path) -> None:
    good = {"context": [["Ed Wood", ["Ed Wood was a filmmaker."]]]}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps([good, good])[:-1] + ", " + "[" * 5000 + "]" * 5000 + "]")
    result = run_import(path.name, "--out", "out.db", cwd=tmp_path)
    assert result.returncode == 2
    assert "mixed.json: item 3 is nested too deeply (at character" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
