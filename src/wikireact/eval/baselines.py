"""The baselines without Wikipedia: Standard (direct answer), CoT, and CoT-SC (majority vote).

Prompts are written for this project. The few-shot examples come from a prompt file
(`wikireact.prompting.exemplars`: `cotqa_*` for CoT, `webqa_*` for Standard); wikireact's own are on
the same three example questions as the ReAct prompt, so every method sees the same
demonstrations.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from wikireact.context import Task
from wikireact.eval.scoring import normalize_answer
from wikireact.models.call_metadata import CALL_INDEX_KEY
from wikireact.prompting.exemplars import QaExemplar, default_qa
from wikireact.prompting.tasks import input_line
from wikireact.protocols.labels import normalize_label

STANDARD_INSTRUCTION = (
    "Answer the question with a short phrase (or yes/no). Reply on one line as `Answer: ...`."
)
COT_INSTRUCTION = (
    "Answer the question. Think step by step on one line starting with `Thought:`, and end "
    "that line with `So the answer is X.` where X is a short phrase (or yes/no)."
)
FEVER_STANDARD_INSTRUCTION = (
    "Decide whether the claim is true (SUPPORTS), false (REFUTES), or cannot be decided from "
    "what is known (NOT ENOUGH INFO). Reply on one line as `Answer: LABEL`."
)
FEVER_COT_INSTRUCTION = (
    "Decide whether the claim is true (SUPPORTS), false (REFUTES), or cannot be decided from "
    "what is known (NOT ENOUGH INFO). Think step by step on one line starting with `Thought:`, "
    "then give the label on the next line as `Answer: LABEL`."
)
INSTRUCTIONS: dict[tuple[str, Task], str] = {
    ("standard", "hotpotqa"): STANDARD_INSTRUCTION,
    ("cot", "hotpotqa"): COT_INSTRUCTION,
    ("standard", "fever"): FEVER_STANDARD_INSTRUCTION,
    ("cot", "fever"): FEVER_COT_INSTRUCTION,
}
ChatModel = Runnable[LanguageModelInput, BaseMessage]
"""A chat model, possibly bound to run metadata (`model.with_config(...)`)."""
# Found by scanning, not by one regex: `answer is[:\s]*(.+?)\s*\.?\s*$` took seconds on a
# reply with a few thousand spaces (cubic backtracking); these scans are linear.
_ANSWER_IS = re.compile(r"answer is", re.IGNORECASE)
_ANSWER_LABEL = re.compile(r"answer\s*:", re.IGNORECASE)


@dataclass
class CallStats:
    """Model calls and tokens spent by a method on one question."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, reply: AIMessage) -> None:
        """Count one model reply."""
        usage: dict[str, Any] = dict(reply.usage_metadata or {})
        self.model_calls += 1
        self.input_tokens += int(usage.get("input_tokens", 0))
        self.output_tokens += int(usage.get("output_tokens", 0))


@dataclass
class Vote:
    """The outcome of CoT-SC: the majority answer and how many samples agreed."""

    answer: str | None
    votes: int
    samples: int
    answers: list[str | None] = field(default_factory=list)


def standard_messages(
    question: str, exemplars: Sequence[QaExemplar] | None = None, task: Task = "hotpotqa"
) -> list[BaseMessage]:
    """Messages for the Standard baseline (`exemplars` default: wikireact's own for `task`)."""
    messages: list[BaseMessage] = [SystemMessage(INSTRUCTIONS["standard", task])]
    for example in default_qa("standard", task) if exemplars is None else exemplars:
        messages += [
            HumanMessage(input_line(task, example.question)),
            AIMessage(f"Answer: {example.answer}"),
        ]
    return [*messages, HumanMessage(input_line(task, question))]


def cot_messages(
    question: str, exemplars: Sequence[QaExemplar] | None = None, task: Task = "hotpotqa"
) -> list[BaseMessage]:
    """Messages for CoT and CoT-SC (`exemplars` default: wikireact's own for `task`).

    A FEVER exemplar's turn is its thought and then `Answer: LABEL`, as in the paper's
    `cotqa_simple3`; a HotpotQA one's thought ends `So the answer is X.`.
    """
    messages: list[BaseMessage] = [SystemMessage(INSTRUCTIONS["cot", task])]
    for example in default_qa("cot", task) if exemplars is None else exemplars:
        reply = f"Thought: {example.thought}"
        if task == "fever":
            reply += f"\nAnswer: {example.answer}"
        messages += [HumanMessage(input_line(task, example.question)), AIMessage(reply)]
    return [*messages, HumanMessage(input_line(task, question))]


def read_answer(text: str, task: Task = "hotpotqa") -> str | None:
    """Return a Standard/CoT reply's answer; for FEVER its label when it names one (else as written)."""
    answer = extract_answer(text)
    if task == "fever" and answer is not None:
        return normalize_label(answer) or answer
    return answer


def extract_answer(text: str) -> str | None:
    """Return the answer in `... So the answer is X.` or `Answer: X`, else None."""
    found = _after_answer_is(text)
    if found is not None:
        return found.strip().strip('"') or None
    line = _after_answer_label(text)
    return line.strip().rstrip(".") if line is not None else None


def _after_answer_is(text: str) -> str | None:
    """Return what follows the first `answer is` (and any `:`/spaces), less a final period."""
    rest = next((text[m.end() :] for m in _ANSWER_IS.finditer(text) if m.end() < len(text)), None)
    if rest is None:
        return None
    lead = 0
    while lead < len(rest) and (rest[lead] == ":" or rest[lead].isspace()):
        lead += 1
    body = rest[min(lead, len(rest) - 1) :]
    kept = body.rstrip()
    if kept.endswith("."):
        kept = kept[:-1].rstrip()
    return body[: max(len(kept), 1)]


def _after_answer_label(text: str) -> str | None:
    """Return the rest of the first line reading `Answer: X` (leading blanks allowed), else None."""
    for label in _ANSWER_LABEL.finditer(text):
        start = label.start()
        while start > 0 and text[start - 1].isspace():
            start -= 1
        if start > 0 and text[start - 1] != "\n" and text.find("\n", start, label.start()) == -1:
            continue  # `answer:` in the middle of a line
        after = text[label.end() :]
        answer = after.lstrip()
        if not answer:  # only blanks follow: the last character that is not a newline
            tail = after.rstrip("\n")
            if tail:
                return tail[-1]
            continue
        return answer.split("\n", 1)[0].rstrip()
    return None


def _call(
    model: ChatModel, messages: list[BaseMessage], index: int, stats: CallStats, **sampling: Any
) -> str:
    reply = model.invoke(messages, config={"metadata": {CALL_INDEX_KEY: index}}, **sampling)
    assert isinstance(reply, AIMessage)
    stats.add(reply)
    return reply.text


def run_standard(
    model: ChatModel,
    question: str,
    stats: CallStats,
    exemplars: Sequence[QaExemplar] | None = None,
    task: Task = "hotpotqa",
) -> str | None:
    """Answer directly."""
    reply = _call(model, standard_messages(question, exemplars, task), 0, stats)
    return read_answer(reply, task)


def run_cot(
    model: ChatModel,
    question: str,
    stats: CallStats,
    exemplars: Sequence[QaExemplar] | None = None,
    task: Task = "hotpotqa",
) -> str | None:
    """Answer after one chain of thought (greedy)."""
    return read_answer(_call(model, cot_messages(question, exemplars, task), 0, stats), task)


def run_cot_sc(
    model: ChatModel,
    question: str,
    stats: CallStats,
    *,
    samples: int,
    temperature: float,
    sampling: dict[str, Any],
    exemplars: Sequence[QaExemplar] | None = None,
    task: Task = "hotpotqa",
) -> Vote:
    """Sample `samples` chains of thought and take the majority answer (ties: first seen).

    Sample i is model call i: its index goes with the call (run metadata), so a model cache
    keeps every sample apart even when the model takes no seed. FEVER samples vote with
    their labels (`supported` and `SUPPORTS` are one vote).
    """
    messages = cot_messages(question, exemplars, task)
    answers = [
        read_answer(
            _call(
                model,
                messages,
                i,
                stats,
                temperature=temperature,
                **{k: (v + i if k == "seed" else v) for k, v in sampling.items()},
            ),
            task,
        )
        for i in range(samples)
    ]
    counts = Counter(normalize_answer(a) for a in answers if a)
    if not counts:
        return Vote(None, 0, samples, answers)
    best, votes = counts.most_common(1)[0]
    answer = next(a for a in answers if a and normalize_answer(a) == best)
    return Vote(answer, votes, samples, answers)


def majority_is_weak(vote: Vote) -> bool:
    """Return the paper's CoT-SC -> ReAct rule: the majority answer got fewer than n/2 votes."""
    return vote.votes < vote.samples / 2


def react_needs_fallback(answer: str | None) -> bool:
    """Return the paper's ReAct -> CoT-SC rule: ReAct ended without an answer."""
    return answer is None
