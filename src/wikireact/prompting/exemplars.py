r"""Few-shot exemplars read from a prompt file in the layout of the ReAct paper's code.

A prompt file is a JSON object whose values are whole few-shot prompts, for example
`{"webthink_simple6": "Question: ...\\nThought 1: ...\\nAction 1: Search[...]\\n
Observation 1: ...\\n...Action 3: Finish[...]\\nQuestion: ...", ...}`. Two kinds of value:

- episodes (`webthink_*` for ReAct, `webact_*` for Act): `Question:` (FEVER: `Claim:`) then numbered
  `Thought N:` / `Action N:` / `Observation N:` lines, ending with `Action N: Finish[...]`;
- question answering (`cotqa_*` for CoT, `webqa_*` for Standard): `Question:`, an optional
  `Thought: ... So the answer is X.` and `Answer: X`;
- plans (`rewoo_*` for ReWOO's planner): `Question:` (FEVER: `Claim:`) then the plan, `Plan: ...`
  lines and `#E<n> = Tool[input]` steps (checked when the planner reads them, as any plan is).

wikireact ships its own exemplars in this layout, written for this project: `data/prompts.json`
(HotpotQA, keys `*_simple6`), `data/fever.json` (FEVER, keys `*_simple3`, as the paper's
`fever.json`) and `data/rewoo.json` / `data/rewoo_fever.json` (ReWOO's plans, for each task);
`--prompts FILE` replaces them, e.g.
with the paper's `prompts_naive.json` or `fever.json`.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wikireact._json_text import parse_json
from wikireact.context import Task
from wikireact.errors import JsonTextError, PromptFileError
from wikireact.protocols.text import Action, parse_action
from wikireact.state import Step

DEFAULT_PROMPTS = Path(__file__).parent / "data" / "prompts.json"
DEFAULT_PLAN_PROMPTS = Path(__file__).parent / "data" / "rewoo.json"
"""ReWOO's own plan exemplars (a file of their own, so ReAct's prompt file and hash stay as they were)."""
TASK_PLAN_PROMPTS: dict[Task, Path] = {
    "hotpotqa": DEFAULT_PLAN_PROMPTS,
    "fever": Path(__file__).parent / "data" / "rewoo_fever.json",
}
"""ReWOO's own plan exemplars for each task (FEVER's check claims; same key, `rewoo_simple3`)."""
FEVER_PROMPTS = Path(__file__).parent / "data" / "fever.json"
TASK_PROMPTS: dict[Task, Path] = {"hotpotqa": DEFAULT_PROMPTS, "fever": FEVER_PROMPTS}
"""wikireact's own exemplars for each task."""
Need = Literal["react", "act", "cot", "standard", "rewoo"]
DEFAULT_KEYS: dict[Need, tuple[str, ...]] = {
    "react": ("webthink_simple6",),
    "act": ("webact_simple6",),
    "cot": ("cotqa_simple6",),
    "standard": ("webqa_simple6", "cotqa_simple6"),
    "rewoo": ("rewoo_simple3",),
}
FEVER_KEYS: dict[Need, tuple[str, ...]] = {
    "react": ("webthink_simple3",),
    "act": ("webact_simple3",),
    "cot": ("cotqa_simple3",),
    "standard": ("webqa_simple3", "cotqa_simple3"),
}
"""The keys of the paper's `fever.json` (and of wikireact's own FEVER file)."""
TASK_KEYS: dict[Task, dict[Need, tuple[str, ...]]] = {"hotpotqa": DEFAULT_KEYS, "fever": FEVER_KEYS}
_LABEL = re.compile(r"(Question|Claim|Thought|Action|Observation|Answer)(?: (\d+))?:(.*)")


@dataclass(frozen=True)
class ExemplarStep:
    """One step of an example episode (the thought is empty in Act prompts)."""

    thought: str
    action: str
    observation: str


@dataclass(frozen=True)
class EpisodeExemplar:
    """An example ReAct/Act episode: a question and its steps, the last one a Finish."""

    question: str
    steps: tuple[ExemplarStep, ...]

    def as_history(self) -> list[Step]:
        """Return the steps as an episode's history, as the prompts render it."""
        return [
            Step(
                kind="finish" if step.action.startswith("Finish") else "executed",
                thought=step.thought,
                action=step.action,
                observation=step.observation,
                raw="",
            )
            for step in self.steps
        ]


@dataclass(frozen=True)
class QaExemplar:
    """An example for Standard/CoT: a question, a chain of thought (may be empty), the answer."""

    question: str
    thought: str
    answer: str


@dataclass(frozen=True)
class PlanExemplar:
    """An example plan for ReWOO's planner: a question and its plan as written."""

    question: str
    plan: str


@dataclass(frozen=True)
class PromptSet:
    """The exemplars one evaluation uses, with where they came from (for the report)."""

    file: str
    sha256: str
    episode_key: str | None = None
    episodes: tuple[EpisodeExemplar, ...] = ()
    qa_key: str | None = None
    qa: tuple[QaExemplar, ...] = ()
    plan_key: str | None = None
    plans: tuple[PlanExemplar, ...] = ()
    keys: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Return what the report records: file, sha256, keys used and exemplars per key."""
        exemplars = {}
        if self.episode_key:
            exemplars[self.episode_key] = len(self.episodes)
        if self.qa_key:
            exemplars[self.qa_key] = len(self.qa)
        if self.plan_key:
            exemplars[self.plan_key] = len(self.plans)
        return {
            "prompts_file": self.file,
            "prompts_sha256": self.sha256,
            "prompts_exemplars": exemplars,
        }


def _labelled(text: str) -> Iterable[tuple[str | None, str]]:
    """Yield (label, text) per non-blank line; label None for a continuation line."""
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            continue
        match = _LABEL.match(line.strip())
        if match:  # a FEVER claim stands where a question stands
            label = "Question" if match.group(1) == "Claim" else match.group(1)
            yield label, match.group(3).strip()
        else:
            yield None, line.strip()


def parse_episodes(text: str) -> tuple[EpisodeExemplar, ...]:
    """Return the usable example episodes in a `webthink`/`webact` prompt.

    Usable: a question and at least one step, every action valid, the last one a Finish.
    """
    found: list[tuple[str, list[dict[str, str]]]] = []
    last: dict[str, str] | None = None
    last_field = ""
    for label, value in _labelled(text):
        if label == "Question":
            found.append((value, []))
            last, last_field = None, "question"
            continue
        if not found:
            continue  # text before the first question (an instruction) is not an exemplar
        steps = found[-1][1]
        if label == "Thought" or (label == "Action" and (last is None or last.get("action"))):
            last = {"thought": "", "action": "", "observation": ""}
            steps.append(last)
        if label in ("Thought", "Action", "Observation") and last is not None:
            last_field = label.lower()
            last[last_field] = value
        elif label is None and last is not None and last_field in last:
            last[last_field] = f"{last[last_field]} {value}".strip()
    return tuple(
        EpisodeExemplar(question, tuple(ExemplarStep(**s) for s in steps))
        for question, steps in found
        if question and _usable_steps(steps)
    )


def _usable_steps(steps: Sequence[dict[str, str]]) -> bool:
    actions = [parse_action(s["action"]) for s in steps]
    return (
        bool(actions)
        and all(isinstance(a, Action) for a in actions)
        and [a.name for a in actions if isinstance(a, Action)][-1] == "Finish"
    )


def parse_qa(text: str) -> tuple[QaExemplar, ...]:
    """Return the usable examples (question and answer, optional thought) of a `cotqa`/`webqa` prompt."""
    found: list[dict[str, str]] = []
    last_field = ""
    for label, value in _labelled(text):
        if label == "Question":
            found.append({"question": value, "thought": "", "answer": ""})
        elif not found:
            continue
        elif label in ("Thought", "Answer"):
            found[-1][label.lower()] = value
        if label is not None:
            last_field = label.lower()
        elif last_field in found[-1]:
            found[-1][last_field] = f"{found[-1][last_field]} {value}".strip()
    return tuple(QaExemplar(**f) for f in found if f["question"] and f["answer"])


def parse_plans(text: str) -> tuple[PlanExemplar, ...]:
    """Return the example plans of a `rewoo_*` prompt: each question (or claim) with the lines below it.

    Usable: a question and at least one `#E` step line.
    """
    found: list[tuple[str, list[str]]] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if stripped.startswith(("Question:", "Claim:")):
            found.append((stripped.partition(":")[2].strip(), []))
        elif found and stripped:
            found[-1][1].append(stripped)
    return tuple(
        PlanExemplar(question, "\n".join(lines))
        for question, lines in found
        if question and any(line.upper().startswith("#E") for line in lines)
    )


def read_prompt_file(path: Path) -> tuple[dict[str, Any], str]:
    """Return a prompt file's texts by key and its SHA-256; `PromptFileError` (one line) if unusable."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PromptFileError(f"cannot read prompt file {path}: {exc.strerror or exc}") from None
    try:
        data = parse_json(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, JsonTextError) as exc:
        raise PromptFileError(f"prompt file {path} is not UTF-8 JSON ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise PromptFileError(f"prompt file {path} must be a JSON object of prompt texts")
    return data, hashlib.sha256(raw).hexdigest()


def load_prompts(
    path: Path | None, needs: Iterable[Need], keys: Sequence[str] = (), task: Task = "hotpotqa"
) -> PromptSet:
    """Read the exemplars for `needs` from `path` (default: wikireact's own file for `task`).

    Each need takes the first of its default keys for `task` present in the file, unless
    one of `keys` (named by the user) holds exemplars of its kind (episodes or question
    answering).
    """
    needs = tuple(needs)
    file = path or (TASK_PLAN_PROMPTS[task] if "rewoo" in needs else TASK_PROMPTS[task])
    default_keys = TASK_KEYS[task]
    data, digest = read_prompt_file(file)
    for key in keys:
        if key not in data:
            raise PromptFileError(
                f"prompt file {file} has no key {key!r} (it has: {_keys_shown(data)})"
            )
    named_episodes = [k for k in keys if parse_episodes(data[k])]
    named_qa = [k for k in keys if k not in named_episodes and parse_qa(data[k])]
    named_plans = [
        k for k in keys if k not in named_episodes and k not in named_qa and parse_plans(data[k])
    ]
    unused = [k for k in keys if k not in named_episodes + named_qa + named_plans]
    if unused:
        raise PromptFileError(f"prompt file {file}: key {unused[0]!r} holds no usable exemplar")
    result: dict[str, Any] = {"file": str(file), "sha256": digest, "keys": {}}
    for need in sorted(set(needs)):
        kind = "episodes" if need in ("react", "act") else "plans" if need == "rewoo" else "qa"
        named = {"episodes": named_episodes, "plans": named_plans, "qa": named_qa}[kind]
        need_keys = default_keys.get(need, DEFAULT_KEYS[need])  # ReWOO: one plan file
        chosen = named[0] if named else next((k for k in need_keys if k in data), None)
        if chosen is None:
            missing = f"prompt file {file} has no {' or '.join(need_keys)} key for {need}"
            shown = f"(it has: {_keys_shown(data)})"
            raise PromptFileError(
                f"{missing}; name one in load_prompts(keys=...) {shown}",
                cli=f"{missing}; name one with --prompts-key {shown}",
            )
        if kind == "episodes":
            found: tuple[Any, ...] = parse_episodes(data[chosen])
        elif kind == "plans":
            found = parse_plans(data[chosen])
        else:
            found = tuple(q for q in parse_qa(data[chosen]) if need == "standard" or q.thought)
        if not found:
            raise PromptFileError(
                f"prompt file {file}: key {chosen!r} holds no usable exemplar for {need}"
            )
        result["keys"][need] = chosen
        if kind == "episodes":
            result |= {"episode_key": chosen, "episodes": found}
        elif kind == "plans":
            result |= {"plan_key": chosen, "plans": found}
        else:
            result |= {"qa_key": chosen, "qa": found}
    return PromptSet(**result)


def _keys_shown(data: dict[str, Any], limit: int = 10) -> str:
    """Return the first `limit` keys of a prompt file for a message (each cut to 40 characters)."""
    shown = ", ".join(key[:40] for key in list(data)[:limit]) or "none"
    return shown + (f" and {len(data) - limit} more" if len(data) > limit else "")


@functools.cache
def default_episodes(
    method: Literal["react", "act"], task: Task = "hotpotqa"
) -> tuple[EpisodeExemplar, ...]:
    """Return wikireact's own example episodes for `method` and `task` (read once per process)."""
    return load_prompts(None, [method], task=task).episodes


@functools.cache
def default_plans(task: Task = "hotpotqa") -> tuple[PlanExemplar, ...]:
    """Return wikireact's own example plans for ReWOO's planner and `task` (read once per process)."""
    return load_prompts(None, ["rewoo"], task=task).plans


@functools.cache
def default_qa(need: Literal["cot", "standard"], task: Task = "hotpotqa") -> tuple[QaExemplar, ...]:
    """Return wikireact's own Standard/CoT examples for `task` (read once per process)."""
    return load_prompts(None, [need], task=task).qa
