"""Rows of benchmark figures, printed as one table; the exit code says whether targets held."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One figure: its value, unit, and (optionally) a target and whether it was met."""

    name: str
    value: float
    unit: str
    target: str = ""
    ok: bool | None = None


def print_rows(rows: list[Row]) -> int:
    """Print the rows as a table; return 1 if any target was missed, else 0."""
    width = max(len(r.name) for r in rows)
    for r in rows:
        verdict = "" if r.ok is None else ("ok" if r.ok else "MISSED")
        print(f"{r.name:<{width}}  {r.value:>12.3f} {r.unit:<6} {r.target:<24} {verdict}")
    return 1 if any(r.ok is False for r in rows) else 0
