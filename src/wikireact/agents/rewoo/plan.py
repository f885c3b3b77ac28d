"""Reading a ReWOO plan: `Plan: <reasoning>` lines and `#E<n> = <Tool>[<input>]` steps.

`read_plan` turns the planner's text into a `Plan` (its steps and their dependencies) or a
`PlanError` saying what is wrong with it, in one line: a malformed step line, an unknown
tool, a reference to an `#E` no step defines, a cycle, or more steps than the cap. It
never raises and never evaluates anything: inputs are plain strings.

A step depends on every `#E<k>` its input cites (they may come later in the text: the
order of the plan is its dependency order, not its line order), and a `Lookup` also on
the nearest `Search` above it, whose page it reads. One rule reads every reference
(`references`): `#E01` is `#E1`, both for what a step waits for and for what `substitute`
puts in its place. Lines are scanned with string operations only (no regular expression
over a whole line), one at a time, and reading stops at the first step past the cap: a
plan of any length is read in time linear in the part read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal, NamedTuple

from wikireact.protocols.text import cut_at_observation

ToolName = Literal["Search", "Lookup", "LLM"]
TOOLS: tuple[ToolName, ...] = ("Search", "Lookup", "LLM")
REFERENCE = re.compile(r"#E([0-9]+)")
"""An evidence reference inside a step's input (`#E2`); ASCII digits then a non-digit: linear."""
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
    """Read the planner's `text` into a plan of at most `max_steps` steps, or say why not.

    Reading stops at the first step past `max_steps`: the lines after it are never scanned.
    """
    text = cut_at_observation(str(text).replace("\r\n", "\n").replace("\r", "\n"))
    thoughts: list[str] = []
    thought = ""
    steps: list[PlanStep] = []
    defined: set[int] = set()
    last_search: int | None = None
    for raw in plan_lines(text):
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
        if len(steps) == max_steps:
            return PlanError(
                f"the plan has more than {max_steps} steps; the step budget allows at most "
                f"{max_steps}."
            )
        step = _read_step(line, thought, last_search)
        if isinstance(step, PlanError):
            return step
        if step.number in defined:
            return PlanError(f"{step.name} is defined twice; number each step once.", line)
        steps.append(step)
        defined.add(step.number)
        if step.tool == "Search":
            last_search = step.number
    if not steps:
        return PlanError(f"the plan has no steps; write each one as {STEP_FORM}.")
    problem = _missing_reference(steps) or _cycle(steps)
    if problem is not None:
        return problem
    return Plan(" ".join(t for t in thoughts if t), tuple(steps))


def plan_lines(text: str) -> Iterator[str]:
    """Yield the lines of `text` one at a time (a reader that stops early splits no further)."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        yield text[start:end]
        start = end + 1


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
    numbers = [reference.number for reference in references(argument)]
    if None in numbers:
        return PlanError(f"an evidence number in `{line[:200]}` is too long.", line)
    cited = tuple(dict.fromkeys(n for n in numbers if n is not None))
    page_of = last_search if tool == "Lookup" else None
    needs = cited + ((page_of,) if page_of is not None and page_of not in cited else ())
    return PlanStep(number, tool, argument, thought, line, needs, page_of)


def _is_number(digits: str) -> bool:
    """Whether `digits` is an evidence number: ASCII digits, at most `MAX_NUMBER_DIGITS` of them."""
    return len(digits) <= MAX_NUMBER_DIGITS and digits.isascii() and digits.isdigit()


class Reference(NamedTuple):
    """An `#E<k>` cited in a step's input: where it is written, and the evidence it names."""

    start: int
    end: int
    number: int | None
    """The evidence number (`#E01` and `#E1` both name 1); None when it is too long to be one."""


def references(text: str) -> Iterator[Reference]:
    """Yield every evidence reference in `text`, in order: the one rule for reading them."""
    for match in REFERENCE.finditer(text):  # ASCII digits: a number unless too long
        start, end = match.span()
        digits = end - start - 2
        yield Reference(start, end, int(match.group(1)) if digits <= MAX_NUMBER_DIGITS else None)


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


def substitute(text: str, evidence: dict[str, str], render: Callable[[str], str] = str) -> str:
    """Return `text` with every `#E<k>` whose evidence is known replaced by `render(evidence)`.

    `evidence` is keyed by evidence name (`#E1`); a reference is read by `references`, so
    `#E01` is replaced by `#E1`'s evidence, as the step waited for it.
    """
    parts: list[str] = []
    done = 0
    for reference in references(text):
        found = None if reference.number is None else evidence.get(f"#E{reference.number}")
        if found is not None:
            parts += [text[done : reference.start], render(found)]
            done = reference.end
    parts.append(text[done:])
    return "".join(parts)
