"""Plans, lessons and values a local model writes under its agent's reply form are read.

Whatever a reply grammar admits, the agent's own reader must accept: random strings are
drawn from each grammar (`gbnf_samples`: any characters, every list length, references),
llama.cpp's grammar sampler confirms it admits each one (so the samples are the grammar's
as llama.cpp reads it), and the agent's reader must read it. The agents' graphs then run
on the tiny GGUF model of `tiny_gguf` through `wikireact ask`: decoding freely it writes
only line breaks, no plan; under its agent's reply form the plan parses.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from gbnf_samples import llama_accepts, sample
from support import QUESTION, write_snapshot
from tiny_gguf import TEMPLATE, write_tiny_model
from typer.testing import CliRunner

from wikireact.agents.lats.prompts import VALUE_FORM
from wikireact.agents.lats.values import read_value
from wikireact.agents.plan_execute.planning import reply_form
from wikireact.agents.plan_execute.replies import read_reply
from wikireact.agents.reflexion.prompts import REFLECTION_FORM
from wikireact.agents.rewoo.plan import Plan, read_plan
from wikireact.cli.app import app
from wikireact.models.local.reply_grammars import REFLECTION_OPENING, reply_grammar
from wikireact.models.reply_form import ReplyForm, read_reply_form

pytest.importorskip("llama_cpp")

SAMPLES = 300
LIMIT = 4


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A llama.cpp model whose vocabulary spells any text (the tiny model's bytes)."""
    from wikireact.models.local.llama import LlamaCppChatModel

    path = write_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny.gguf")
    return LlamaCppChatModel(model_path=str(path), chat_template=TEMPLATE)._client()


def admitted(vocabulary: Any, form: ReplyForm) -> list[str]:
    """Return `SAMPLES` random replies `form`'s grammar admits, each confirmed by llama.cpp."""
    grammar, rng = reply_grammar(form), random.Random(41)
    texts = [sample(grammar, rng) for _ in range(SAMPLES)]
    assert all(llama_accepts(vocabulary, grammar, text) for text in texts)
    return texts


def test_every_rewoo_plan_the_grammar_admits_is_read(vocabulary: Any) -> None:
    texts = admitted(vocabulary, ReplyForm("rewoo_plan", LIMIT))
    plans = [read_plan(text, LIMIT) for text in texts]
    unread = [(t, p) for t, p in zip(texts, plans, strict=True) if not isinstance(p, Plan)]
    assert not unread
    read = [plan for plan in plans if isinstance(plan, Plan)]
    assert {len(plan.steps) for plan in read} == set(range(1, LIMIT + 1))
    assert {step.tool for plan in read for step in plan.steps} == {"Search", "Lookup", "LLM"}
    assert any(len(step.needs) > 1 for plan in read for step in plan.steps)  # cites #E<k>


def test_a_plan_that_cites_what_no_earlier_step_found_is_not_admitted(vocabulary: Any) -> None:
    grammar = reply_grammar(ReplyForm("rewoo_plan", 3))
    first = "Plan: Find it.\n#E1 = Search[Ed Wood]\n"
    assert llama_accepts(vocabulary, grammar, first + "Plan: Read it.\n#E2 = LLM[Born? #E1]\n")
    for wrong in ("LLM[#E2]", "LLM[#E12]", "LLM[#E3]", "LLM[]", "LLM[a]b]"):
        assert not llama_accepts(vocabulary, grammar, f"{first}Plan: Read it.\n#E2 = {wrong}\n")
    assert not llama_accepts(vocabulary, grammar, "Plan: Read.\n#E1 = Lookup[born]\n")


@pytest.mark.parametrize(
    ("call", "goals_left", "task"),
    [
        ("plan", LIMIT, "hotpotqa"),
        ("replan", LIMIT, "hotpotqa"),
        ("replan", 2, "fever"),
        ("replan", 0, "hotpotqa"),
        ("replan", 0, "fever"),
    ],
    ids=["plan", "replan", "replan-fever", "final", "final-fever"],
)
def test_every_plan_execute_reply_the_grammar_admits_is_read(
    vocabulary: Any, call: str, goals_left: int, task: str
) -> None:
    form = reply_form(call, goals_left, task)  # type: ignore[arg-type]
    texts = admitted(vocabulary, form)
    replies = [read_reply(t, finish_allowed=call == "replan", task=task) for t in texts]  # type: ignore[arg-type]
    assert not [(t, r.error) for t, r in zip(texts, replies, strict=True) if r.error]
    assert all(len(reply.subgoals) <= goals_left for reply in replies)
    if call == "plan":
        assert {len(reply.subgoals) for reply in replies} == set(range(1, LIMIT + 1))
    if goals_left == 0:
        assert all(reply.finish for reply in replies)
    if task == "fever":
        assert {r.finish for r in replies if r.finish} == {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}


def test_a_reflection_is_one_or_two_sentences_of_its_own(vocabulary: Any) -> None:
    for text in admitted(vocabulary, REFLECTION_FORM):
        assert text.startswith(REFLECTION_OPENING) and text.endswith(".")
        assert 1 <= text.count(".") <= 2 and "\n" not in text


def test_every_value_the_grammar_admits_is_read_in_range(vocabulary: Any) -> None:
    values = [read_value(text) for text in admitted(vocabulary, VALUE_FORM)]
    assert all(value.valued for value in values)
    assert {value.value for value in values} == {n / 10 for n in range(1, 11)}


def test_a_form_the_model_does_not_know_is_ignored() -> None:
    assert read_reply_form({"wikireact_reply_form": {"kind": "poem"}}) is None
    assert read_reply_form(ReplyForm("value").as_metadata()) == ReplyForm("value")


@pytest.mark.parametrize("method", ["rewoo", "plan-execute"])
def test_a_small_local_model_writes_a_plan_its_agent_reads(
    method: str, tmp_path: Path, data_dir: Path
) -> None:
    # Decoding freely, the tiny model writes line breaks: no plan, status invalid_plan.
    tiny = write_tiny_model(tmp_path / "tiny.gguf")
    snapshot = write_snapshot(tmp_path / "pages.db")
    done = CliRunner().invoke(
        app,
        [
            *("ask", QUESTION, "--agent", method, "--model", f"local:{tiny}"),
            *("--wiki", str(snapshot), "--max-steps", "3", "--json"),
        ],
    )
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] != "invalid_plan", result
    assert not [step for step in result["trajectory"] if step["kind"] == "invalid"]
