"""Rendering episodes in the terminal (rich) and as JSON."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape

STATUS_STYLE = {
    "finished": "bold green",
    "budget_exhausted": "bold yellow",
    "repetition_halted": "bold yellow",
    "running": "bold cyan",
}


def show_step(console: Console, event: dict[str, Any]) -> None:
    """Print one step (the custom stream event emitted by `observe`)."""
    n = event["step"]
    if event.get("thought"):
        console.print(f"[bold magenta]Thought {n}:[/] {escape(event['thought'])}")
    console.print(f"[bold blue]Action {n}:[/] {escape(event['action'] or '(none)')}")
    if event.get("observation"):
        console.print(f"[dim]Observation {n}:[/] {escape(event['observation'])}")
    console.print()


def show_result(console: Console, result: dict[str, Any], thread_id: str) -> None:
    """Print the answer, status and totals of an ended (or paused) episode."""
    status = result.get("status", "running")
    style = STATUS_STYLE.get(status, "bold")
    usage = result.get("usage") or []
    tokens_in = sum(u["input_tokens"] for u in usage)
    tokens_out = sum(u["output_tokens"] for u in usage)
    console.print(f"[bold]Answer:[/] {escape(str(result.get('answer')))}")
    console.print(
        f"[{style}]Status: {status}[/]  steps: {result.get('steps', 0)}  "
        f"tokens: {tokens_in} in / {tokens_out} out  thread: {thread_id}"
    )


def result_json(result: dict[str, Any], thread_id: str) -> str:
    """Return the result as one JSON object (answer, status, steps, trajectory, usage, thread id)."""
    return json.dumps(
        {
            "answer": result.get("answer"),
            "status": result.get("status", "running"),
            "steps": result.get("steps", 0),
            "trajectory": result.get("trajectory", []),
            "usage": result.get("usage", []),
            "thread_id": thread_id,
        },
        ensure_ascii=False,
    )
