"""Rendering episodes in the terminal (rich) and as JSON.

Everything shown comes from users, models or Wikipedia, so it is printed literally: text
is wrapped in `rich.text.Text` (never parsed as Rich markup or emoji codes) after
`clean()` removes control and bidi characters that could clear, retitle or reorder the
terminal. JSON output keeps the exact text, with such characters escaped.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from rich.console import Console
from rich.text import Text

from wikireact.evidence.excerpt import excerpt, source_label

STATUS_STYLE = {
    "finished": "bold green",
    "budget_exhausted": "bold yellow",
    "repetition_halted": "bold yellow",
    "invalid_plan": "bold yellow",
    "no_answer": "bold yellow",
    "context_exhausted": "bold yellow",
    "running": "bold cyan",
}
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


class CliConsole(Console):
    """A console that never interprets text and wraps lines only on a terminal.

    Markup, emoji codes and highlighting are off (styles come from `Text` spans), and
    when output is piped or redirected, lines are not hard-wrapped at 80 columns.
    """

    def __init__(self, **kwargs: Any) -> None:
        """Create the console (same arguments as `rich.console.Console`)."""
        super().__init__(markup=False, emoji=False, highlight=False, **kwargs)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Print like `Console.print`, without wrapping when output is not a terminal."""
        if "soft_wrap" not in kwargs or kwargs["soft_wrap"] is None:
            kwargs["soft_wrap"] = not self.is_terminal
        super().print(*objects, **kwargs)


def clean(text: object) -> str:
    """Return `text` safe for a terminal: no control, bidi or invisible format characters.

    Newlines are kept, tabs become spaces, and lone surrogates become U+FFFD.
    """
    out = []
    for ch in str(text):
        if ch == "\n":
            out.append(ch)
        elif ch == "\t":
            out.append(" ")
        elif unicodedata.category(ch) in _UNSAFE_CATEGORIES:
            out.append("\ufffd" if unicodedata.category(ch) == "Cs" else "")
        else:
            out.append(ch)
    return "".join(out)


def labelled(label: str, style: str, text: object) -> Text:
    """Return `label` in `style`, a space, then `text` shown literally and cleaned."""
    return Text.assemble((label, style), " ", clean(text))


def show_step(console: Console, event: dict[str, Any], *, thought: bool = True) -> None:
    """Print one step (the custom stream event emitted by `observe`, or a stored step).

    `thought=False` leaves out the Thought (already shown by the approval prompt).
    """
    n = event["step"]
    if thought and event.get("thought"):
        console.print(labelled(f"Thought {n}:", "bold magenta", event["thought"]))
    console.print(labelled(f"Action {n}:", "bold blue", event.get("action") or "(none)"))
    if event.get("observation"):
        console.print(labelled(f"Observation {n}:", "dim", event["observation"]))
    console.print()


def answer_text(result: dict[str, Any]) -> str:
    """Return the answer, or say in words why there is none."""
    answer = result.get("answer")
    if answer is not None:
        return str(answer)
    status = result.get("status", "running")
    steps = result.get("steps", 0)
    if status == "budget_exhausted":
        reason = result.get("stop_reason")
        return (
            f"no answer (budget: {reason})"
            if reason
            else f"no answer (budget of {steps} steps used)"
        )
    if status == "context_exhausted":
        return f"no answer yet (the next prompt does not fit the model's context window, after {steps} steps)"
    if status == "repetition_halted":
        return "no answer (halted: the same action was proposed again and again)"
    if status == "invalid_plan":
        return "no answer (no plan could run: the re-plan was invalid too)"
    if status == "no_answer":
        return "no answer (the answering call gave no Finish[answer])"
    if status == "finished":
        return "no answer"
    return f"no answer yet (paused after {steps} steps)"


def show_result(console: Console, result: dict[str, Any], thread_id: str) -> None:
    """Print the answer, status and totals of an ended (or paused) episode."""
    status = result.get("status", "running")
    usage = result.get("usage") or []
    tokens_in = sum(u["input_tokens"] for u in usage)
    tokens_out = sum(u["output_tokens"] for u in usage)
    console.print(labelled("Answer:", "bold", answer_text(result)))
    show_evidence(console, result)
    console.print(
        Text.assemble(
            (f"Status: {status}", STATUS_STYLE.get(status, "bold")),
            f"  steps: {result.get('steps', 0)}  model calls: {model_calls(result)}  "
            f"tokens: {tokens_in} in / {tokens_out} out  thread: ",
            clean(thread_id),
        )
    )


EVIDENCE_SHOWN = 3
"""Citations the live view prints after the answer (`--json` has all of them)."""


def show_evidence(console: Console, result: dict[str, Any]) -> None:
    """Print the sentences the answer rests on, the cited span marked; or say there are none."""
    if result.get("answer") is None or "supported" not in result:
        return
    citations = result.get("citations") or []
    if not citations:
        console.print(labelled("Evidence:", "bold", "none: the answer appears in no observation"))
    for citation in citations[:EVIDENCE_SHOWN]:
        before, span, after = excerpt(citation)
        console.print(
            Text.assemble(
                ("Evidence:", "bold"),
                f' {clean(source_label(citation))}: "{clean(before)}',
                (clean(span), "bold underline"),
                f'{clean(after)}"',
            )
        )
    if len(citations) > EVIDENCE_SHOWN:
        console.print(Text(f"  (and {len(citations) - EVIDENCE_SHOWN} more: see --json)"))


def model_calls(result: dict[str, Any]) -> int:
    """Return an episode's model calls: its own count, else one per step (ReAct's)."""
    counted = result.get("model_calls")
    return int(counted) if counted is not None else len(result.get("usage") or [])


def show_transcript(
    console: Console, question: str, values: dict[str, Any], *, status: bool = True
) -> None:
    """Print a thread as a transcript: question, status, answer and steps taken, then every step.

    `status=False` prints only the question and the steps (the recap of `resume`). A FEVER
    thread's input is shown as its claim.
    """
    fever = (values.get("context") or {}).get("task") == "fever"
    console.print(labelled("Claim:" if fever else "Question:", "bold", question))
    if status:
        console.print(labelled("Status:", "bold", values.get("status", "not started")))
        console.print(labelled("Answer:", "bold", answer_text(values)))
        console.print(labelled("Steps:", "bold", values.get("steps", 0)))
    console.print()
    for n, step in enumerate(values.get("trajectory") or [], start=1):
        show_step(console, {"step": n, **step})


def safe_json(value: Any) -> str:
    r"""Return `value` as JSON with control, bidi and surrogate characters escaped as \u codes.

    The text stays exact (a JSON reader gets every character back), but printing the
    JSON cannot move the cursor, retitle the terminal or reorder what it shows.
    """
    text = json.dumps(value, ensure_ascii=False)  # C0 controls are escaped already
    return "".join(
        json.dumps(ch)[1:-1]
        if ch > "\x7e" and unicodedata.category(ch) in _UNSAFE_CATEGORIES
        else ch
        for ch in text
    )


AGENT_OUTPUTS = ("plan", "evidence", "subgoals", "trials", "stats", "path", "stopped_by")
"""The other agents' own outputs that `--json` adds (ReWOO's plan and evidence,
Plan-and-Execute's sub-goals, Reflexion's trials, LATS's node stats, answer branch and stop)."""


def result_json(result: dict[str, Any], thread_id: str) -> str:
    """Return the result as one JSON object (answer, status, steps, trajectory, usage, model calls, thread id, an agent's own outputs)."""
    from wikireact.episode.audit import timed_trajectory  # LangGraph's state: `--help` loads none

    return safe_json(
        {
            "answer": result.get("answer"),
            "status": result.get("status", "running"),
            "steps": result.get("steps", 0),
            "trajectory": timed_trajectory(result.get("trajectory", []), result.get("audit", [])),
            "usage": result.get("usage", []),
            "model_calls": model_calls(result),
            "citations": result.get("citations", []),
            "supported": result.get("supported"),
            "stop_reason": result.get("stop_reason"),
            "thread_id": thread_id,
            **{key: result[key] for key in AGENT_OUTPUTS if key in result},
        }
    )
