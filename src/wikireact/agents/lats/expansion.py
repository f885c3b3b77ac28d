"""Expansion: n candidate next steps for a leaf, sampled or asked for in one reply.

A model whose client samples with a per-call seed (Groq, the local llama.cpp model:
`wikireact.models.sampling`) is called n times on ReAct's prompt for the leaf, at the
search's temperature with seeds 0..n-1, each reply cut at any made-up observation as
ReAct's `reason` does. Any other model (a scripted one, a cached replay) cannot be
relied on to sample: it gets one call asking for n different steps, and its reply is
split into candidates line by line (a candidate ends at its `Action` line). Candidates
whose actions are the same are kept once. Each candidate is then parsed by ReAct's
parser when it is acted on (`candidate.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from wikireact.agents.lats.prompts import expansion_request
from wikireact.agents.lats.state import Candidate
from wikireact.context import Context
from wikireact.models.cache import CachedChatModel
from wikireact.models.sampling import per_call_sampling
from wikireact.nodes.model_call import call_model, reply_text, reply_tokens
from wikireact.prompting.react import STOP_SEQUENCES
from wikireact.protocols.text import Action, cut_at_observation, parse_output

_ACTION_LINE = re.compile(r"^\W{0,10}(?:candidate\s{0,3}\d{1,2}\W{0,5})?action\b", re.IGNORECASE)
_OBSERVATION_LINE = re.compile(r"^\W{0,10}observation\b", re.IGNORECASE)
_CANDIDATE_LABEL = re.compile(r"^\W{0,10}candidate\s{0,3}\d{1,2}\W{0,5}$", re.IGNORECASE)


@dataclass(frozen=True)
class Proposal:
    """An expansion's outcome: its candidates and each model call's tokens."""

    candidates: list[Candidate]
    calls: list[tuple[int, int]]
    """(input tokens, output tokens) of each model call."""


def samples(model: BaseChatModel, context: Context) -> bool:
    """Whether the model's client samples reproducibly (takes a per-call seed).

    A model cache (`--model-cache`) is judged by the model it stands for (`context.model`),
    so a cached run expands as the uncached one did.
    """
    stands_for = None if isinstance(model, CachedChatModel) else model
    return "seed" in per_call_sampling(context.model, stands_for)


def propose(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    *,
    n: int,
    number: int,
    index: int,
    sampled: bool,
    temperature: float,
) -> Proposal:
    """Return up to `n` distinct candidates for step `number` (call indices from `index`)."""
    failure = f"the model did not propose candidates for step {number}"
    texts: list[str] = []
    calls: list[tuple[int, int]] = []
    if sampled:
        for i in range(n):
            runnable = model.bind(temperature=temperature, seed=i)
            reply = call_model(
                runnable, messages, index=index + i, failure=failure, stop=STOP_SEQUENCES
            )
            texts.append(cut_at_observation(reply_text(reply)))
            calls.append(reply_tokens(reply))
    else:
        request = [*messages, expansion_request(n, number)]
        reply = call_model(model, request, index=index, failure=failure)
        texts = split_candidates(reply_text(reply))
        calls.append(reply_tokens(reply))
    return Proposal(distinct(texts, n), calls)


def split_candidates(reply: str) -> list[str]:
    """Split a reply holding several steps into one text per step (each ends at its Action)."""
    found: list[str] = []
    lines: list[str] = []
    for line in reply.splitlines():
        if _OBSERVATION_LINE.match(line) or _CANDIDATE_LABEL.match(line):
            continue
        lines.append(line)
        if _ACTION_LINE.match(line):
            found.append("\n".join(lines).strip())
            lines = []
    rest = "\n".join(lines).strip()
    return found or ([rest] if rest else [""])


def distinct(texts: Sequence[str], n: int) -> list[Candidate]:
    """Return the first `n` candidates whose actions differ (an unparseable one by its text)."""
    seen: set[str] = set()
    kept: list[Candidate] = []
    for text in texts:
        parsed = parse_output(text).result
        key = str(parsed) if isinstance(parsed, Action) else text.strip()
        if key in seen:
            continue
        seen.add(key)
        kept.append(Candidate(raw=text))
    return kept[:n]
