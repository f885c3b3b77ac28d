"""Reading ReWOO plans of 0.25 to 2 MB: milliseconds, which must not grow faster than the input.

The planner's reply is read by `wikireact.agents.rewoo.plan.read_plan` (twice when the
first plan is invalid: the re-plan). A 1 MB plan once cost about 65 s of CPU there, because
each step was compared with every step before it, before the plan was refused for having
more steps than the budget. Shapes:

- steps past the cap: reading stops at the first step past `max_steps` (7), so the time
  is the cost of the text's first pass (Observation cut, line ends), not of its steps;
- prose: no step at all, every line is scanned once (the plan is refused for having none);
- one long step: a single LLM step citing `#E1` hundreds of thousands of times.

Target (exit 1 when missed): a 1 MB plan of each shape is read in under 1 s (it was 65 s),
and doubling the input at most about doubles the time (ratio 2 MB / 1 MB under 3).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from table import Row, print_rows

from wikireact.agents.rewoo.plan import read_plan

TARGET_MS = 1000.0
MAX_RATIO = 3.0
SIZES = (250_000, 500_000, 1_000_000, 2_000_000)
MAX_STEPS = 7


def steps_past_the_cap(size: int) -> str:
    """Return valid steps with their reasoning, far more than the cap."""
    line = "Plan: look it up.\n#E{n} = Search[Page {n}]\n"
    return "".join(line.format(n=n) for n in range(1, size // 30 + 1))[:size]


def prose(size: int) -> str:
    """Return lines of reasoning without a step."""
    return ("I think the answer needs more thought.\n" * (size // 38 + 1))[:size]


def one_long_step(size: int) -> str:
    """Return one LLM step citing the same evidence again and again, after a Search."""
    return "#E1 = Search[Ed Wood]\n#E2 = LLM[" + "#E1 " * (size // 4) + "]"


SHAPES: dict[str, Callable[[int], str]] = {
    "steps past the cap": steps_past_the_cap,
    "prose lines": prose,
    "one long LLM step": one_long_step,
}


def read_ms(text: str) -> float:
    """Return the milliseconds `read_plan` takes on `text` (best of 3)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        read_plan(text, MAX_STEPS)
        best = min(best, (time.perf_counter() - start) * 1000)
    return best


def rows() -> list[Row]:
    """Return, per shape and size, the reading time; the 1 MB time and the 2x ratio have targets."""
    out = []
    for shape, make in SHAPES.items():
        times = {size: read_ms(make(size)) for size in SIZES}
        for size, ms in times.items():
            target, ok = ("", None)
            if size == 1_000_000:
                target, ok = f"< {TARGET_MS:g} ms", ms < TARGET_MS
            out.append(Row(f"read_plan {shape}, {size:,} chars", ms, "ms", target, ok))
        ratio = times[2_000_000] / max(times[1_000_000], 1e-6)
        out.append(
            Row(
                f"read_plan {shape}, 2 MB / 1 MB", ratio, "x", f"< {MAX_RATIO:g}", ratio < MAX_RATIO
            )
        )
    return out


def main() -> int:
    """Print the figures."""
    return print_rows(rows())


if __name__ == "__main__":
    sys.exit(main())
