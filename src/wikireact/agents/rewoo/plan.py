"""Reading a ReWOO plan: `Plan: <reasoning>` lines and `#E<n> = <Tool>[<input>]` steps.

`read_plan` turns the planner's text into a `Plan` (its steps and their dependencies) or a
`PlanError` saying what is wrong with it, in one line: a malformed step line, an unknown
tool, a reference to an `#E` no step defines, a cycle, or more steps than the cap. It
never raises and never evaluates anything: inputs are plain strings.

A step depends on every `#E<k>` its input cites (they may come later in the text: the
order of the plan is its dependency order, not its line order), and a `Lookup` also on
the nearest `Search` above it, whose page it reads. Lines are scanned with string
operations only (no regular expression over a whole line), so hostile text parses in
linear time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from wikireact.protocols.text import cut_at_observation

ToolName = Literal["Search", "Lookup", "LLM"]
TOOLS: tuple[ToolName, ...] = ("Search", "Lookup", "LLM")
REFERENCE = re.compile(r"#E(\d+)")
"""An evidence reference inside a step's input (`#E2`); `\\d+` then a non-digit: linear."""
MAX_NUMBER_DIGITS = 6
"""Evidence numbers longer than this are refused (Python refuses to read a 4,300-digit one)."""
STEP_FORM = "#E<n> = Tool[input] (tools: Search, Lookup, LLM)"
_BULLETS = "*-•>` \t"


@dataclass(frozen=True)
class PlanStep:
    """One step of a plan: `#E<number> = <tool>[<text>]`, with the reasoning above it."""

    number: int
    tool: ToolName
    text: str
    """The input as written, `#E<k>` references included."""
    thought: str
    """The `Plan:` reasoning written above the step ('' when there is none)."""
    line: str
    """The step's line as written (stripped)."""
    needs: tuple[int, ...]
    """The evidence numbers this step waits for (cited ones, and a Lookup's Search)."""
    page_of: int | None = None
    """For a Lookup: the Search whose page it reads (None: no Search above it)."""

    @property
    def name(self) -> str:
        """The step's evidence name, e.g. `#E1`."""
        return f"#E{self.number}"

    def as_text(self) -> str:
        """Return the step in the plan's canonical form, e.g. `#E1 = Search[Ed Wood]`."""
        return f"{self.name} = {self.tool}[{self.text}]"


@dataclass(frozen=True)
class Plan:
    """A valid plan: its reasoning and its steps in the order written."""

    reasoning: str
    steps: tuple[PlanStep, ...]


@dataclass(frozen=True)
class PlanError:
    """Why a plan cannot run; `line` is the offending line ('' when the plan as a whole is wrong)."""

    message: str
    line: str = ""


def read_plan(text: str, max_steps: int) -> Plan | PlanError:
    """Read the planner's `text` into a plan of at most `max_steps` steps, or say why not."""
    text = cut_at_observation(str(text).replace("\r\n", "\n").replace("\r", "\n"))
    thoughts: list[str] = []
    thought = ""
    steps: list[PlanStep] = []
    last_search: int | None = None
    for raw in text.split("\n"):
        line = _unmarked(raw)
        if not line:
            continue
        label, _, rest = line.partition(":")
        if label.strip().strip("*_").lower() == "plan" and not line.startswith("#"):
            thought = rest.strip().lstrip("*_").strip()
            thoughts.append(thought)
            continue
        if not line.upper().startswith("#E"):
            continue  # prose between steps: not a step, not an error
        step = _read_step(line, thought, last_search)
        if isinstance(step, PlanError):
            return step
        if any(s.number == step.number for s in steps):
            return PlanError(f"{step.name} is defined twice; number each step once.", line)
        steps.append(step)
        if step.tool == "Search":
            last_search = step.number
    if not steps:
        return PlanError(f"the plan has no steps; write each one as {STEP_FORM}.")
    if len(steps) > max_steps:
        return PlanError(
            f"the plan has {len(steps)} steps; the step budget allows at most {max_steps}."
        )
    problem = _missing_reference(steps) or _cycle(steps)
    if problem is not None:
        return problem
    return Plan(" ".join(t for t in thoughts if t), tuple(steps))


def _unmarked(raw: str) -> str:
    """Return a line without list marks (`-`, `*`, `1.`), quote marks or code backticks around it."""
    line = raw.strip().lstrip(_BULLETS)
    digits = len(line) - len(line.lstrip("0123456789"))
    if digits and line[digits : digits + 1] in (".", ")"):
        line = line[digits + 1 :]
    return line.strip().lstrip(_BULLETS).rstrip("`* \t")


def _read_step(line: str, thought: str, last_search: int | None) -> PlanStep | PlanError:
    """Read one `#E<n> = Tool[input]` line (the caller checked it starts with `#E`)."""
    name, equals, call = line.partition("=")
    digits = name.strip()[2:].strip()
    if not equals or not _is_number(digits):
        return PlanError(f"`{line[:200]}` is not a step of the form {STEP_FORM}.", line)
    opening = call.find("[")
    call = call.strip()
    if opening == -1 or not call.endswith("]"):
        return PlanError(f"`{line[:200]}` is not a step of the form {STEP_FORM}.", line)
    tool_word = call[: call.find("[")].strip().strip("`*_")
    tool = next((t for t in TOOLS if t.lower() == tool_word.lower()), None)
    if tool is None:
        return PlanError(
            f"unknown tool `{tool_word[:50]}` in `{line[:200]}`; the tools are Search, Lookup and LLM.",
            line,
        )
    argument = call[call.find("[") + 1 : -1].strip()
    if not argument:
        return PlanError(f"{tool} needs a non-empty input in `{line[:200]}`.", line)
    number = int(digits)
    references = [m.group(1) for m in REFERENCE.finditer(argument)]
    if not all(_is_number(r) for r in references):
        return PlanError(f"an evidence number in `{line[:200]}` is too long.", line)
    cited = tuple(dict.fromkeys(int(r) for r in references))
    page_of = last_search if tool == "Lookup" else None
    needs = cited + ((page_of,) if page_of is not None and page_of not in cited else ())
    return PlanStep(number, tool, argument, thought, line, needs, page_of)


def _is_number(digits: str) -> bool:
    """Whether `digits` is an evidence number: ASCII digits, at most `MAX_NUMBER_DIGITS` of them."""
    return digits.isascii() and digits.isdigit() and len(digits) <= MAX_NUMBER_DIGITS


def _missing_reference(steps: list[PlanStep]) -> PlanError | None:
    defined = {s.number for s in steps}
    for step in steps:
        missing = [n for n in step.needs if n not in defined]
        if missing:
            return PlanError(
                f"{step.name} cites #E{missing[0]}, which no step of the plan defines.", step.line
            )
    return None


def _cycle(steps: list[PlanStep]) -> PlanError | None:
    """Return the error naming a dependency cycle, if the plan has one (a self-reference too)."""
    needs = {s.number: s.needs for s in steps}
    done: set[int] = set()
    for start in needs:
        if start in done:
            continue
        path: list[int] = []
        on_path: set[int] = set()
        stack: list[tuple[int, int]] = [(start, 0)]
        while stack:
            node, index = stack.pop()
            if index == 0:
                path.append(node)
                on_path.add(node)
            if index < len(needs[node]):
                stack.append((node, index + 1))
                nxt = needs[node][index]
                if nxt in on_path:
                    loop = path[path.index(nxt) :] + [nxt]
                    shown = " -> ".join(f"#E{n}" for n in loop)
                    return PlanError(f"the plan's steps wait for each other in a cycle ({shown}).")
                if nxt not in done:
                    stack.append((nxt, 0))
                continue
            path.pop()
            on_path.discard(node)
            done.add(node)
    return None


def substitute(text: str, evidence: dict[str, str]) -> str:
    """Return `text` with every `#E<k>` replaced by that evidence (already capped), when known."""
    return REFERENCE.sub(lambda m: evidence.get(f"#E{m.group(1)}", m.group(0)), text)
