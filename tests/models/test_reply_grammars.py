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
from wikireact.agents.rewoo.prompts import (
    LLM_FORM,
    fenced,
    llm_messages,
    solver_form,
    solver_messages,
)
from wikireact.agents.rewoo.solver import worked_plan
from wikireact.agents.rewoo.state import PlannedStep
from wikireact.cli.app import app
from wikireact.models.local.plan_shape import PlanShape, QuestionPlan
from wikireact.models.local.reply_grammars import REFLECTION_OPENING, reply_grammar, shaped_plan
from wikireact.models.local.shaped_replies import local_reply_grammar
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


RURITANIA = "Ruritania is a small kingdom. Its capital is Strelsau, on the Zenda plain."
STRELSAU = "Strelsau is the capital of Ruritania. It stands on the river Rassendyll."


@pytest.mark.parametrize(
    ("shape", "tools"),
    [
        ("single", ["Search"]),
        ("comparison", ["Search", "Search"]),
        ("bridge", ["Search", "LLM", "Search"]),
    ],
)
def test_a_shaped_plan_opens_the_question_titles_in_its_shape(
    vocabulary: Any, shape: PlanShape, tools: list[str]
) -> None:
    titles = ("Ruritania", "Graustark", "The Prisoner of Zenda")
    grammar = shaped_plan(QuestionPlan(shape, titles, titles[:1]), LIMIT)
    assert grammar is not None
    rng = random.Random(41)
    texts = [sample(grammar, rng) for _ in range(60)]
    assert all(llama_accepts(vocabulary, grammar, text) for text in texts)
    plans = [read_plan(text, LIMIT) for text in texts]
    read = [plan for plan in plans if isinstance(plan, Plan)]
    assert len(read) == len(texts)
    for plan in read:
        assert [step.tool for step in plan.steps] == tools
        searched = [step.text for step in plan.steps if step.tool == "Search"]
        if shape == "bridge":
            assert searched == ["Ruritania", "#E2"] and plan.steps[1].needs == (1,)
        else:
            assert set(searched) <= set(titles) and len(set(searched)) == len(searched)


def test_a_shaped_plan_never_repeats_its_first_search(vocabulary: Any) -> None:
    grammar = shaped_plan(QuestionPlan("comparison", ("Ruritania", "Graustark"), ()), LIMIT)
    assert grammar is not None
    first = "Plan: Open it.\n#E1 = Search[Ruritania]\nPlan: Open the other.\n"
    assert llama_accepts(vocabulary, grammar, first + "#E2 = Search[Graustark]\n")
    assert not llama_accepts(vocabulary, grammar, first + "#E2 = Search[Ruritania]\n")
    assert not llama_accepts(vocabulary, grammar, "Plan: Open.\n#E1 = Search[Capital]\n")
    bridge = QuestionPlan("bridge", ("Ruritania",), ("Ruritania",))
    assert shaped_plan(bridge, 2) is None  # three steps do not fit a budget of two


def _turns(messages: list[Any]) -> list[dict[str, str]]:
    from wikireact.models.local.llama import _to_gemma_turns

    return _to_gemma_turns(messages)


def test_a_small_model_s_llm_step_copies_an_entity_from_its_page(vocabulary: Any) -> None:
    question = "On which river does the capital of Ruritania stand?"
    instruction = f"Name the capital of Ruritania in {fenced(RURITANIA)}"
    turns = _turns(llm_messages(question, instruction))
    grammar = local_reply_grammar(LLM_FORM, turns, None, guard_rails=True)
    assert llama_accepts(vocabulary, grammar, "Strelsau")
    for wrong in ("Ruritania", "Vienna", "The capital is Strelsau.", "Its capital is Strelsau"):
        assert not llama_accepts(vocabulary, grammar, wrong)
    free = local_reply_grammar(LLM_FORM, turns, None, guard_rails=False)
    assert llama_accepts(vocabulary, free, "The capital is Strelsau.")


def test_a_small_model_s_solver_copies_its_answer_from_the_pages(vocabulary: Any) -> None:
    question = "On which river does the capital of Ruritania stand?"
    plan = [
        PlannedStep(number=1, tool="Search", text="Ruritania", thought="", needs=[], page_of=None),
        PlannedStep(
            number=2,
            tool="LLM",
            text="Name the capital in #E1",
            thought="",
            needs=[1],
            page_of=None,
        ),
        PlannedStep(number=3, tool="Search", text="#E2", thought="", needs=[2], page_of=None),
    ]
    evidence = {"#E1": RURITANIA, "#E2": "Strelsau", "#E3": STRELSAU}
    turns = _turns(solver_messages(question, worked_plan(plan, evidence)))
    grammar = local_reply_grammar(solver_form("hotpotqa"), turns, None, guard_rails=True)
    assert llama_accepts(vocabulary, grammar, "Finish[Rassendyll]")
    for wrong in ("Strelsau", "Ruritania", "Paris"):  # the bridge, the question's title, made up
        assert not llama_accepts(vocabulary, grammar, f"Finish[{wrong}]")


def test_a_small_local_model_plans_both_hops_of_a_bridge_question(
    tmp_path: Path, data_dir: Path
) -> None:
    # Under the plain plan grammar the tiny model searched whatever it spelled, as Gemma 3
    # 270M searched "Capital" for "the capital of the Czech Republic" and repeated it.
    tiny = write_tiny_model(tmp_path / "tiny.gguf")
    snapshot = write_snapshot(tmp_path / "pages.db", {"Ruritania": RURITANIA, "Strelsau": STRELSAU})
    done = CliRunner().invoke(
        app,
        [
            *("ask", "On which river does the capital of Ruritania stand?"),
            *("--agent", "rewoo", "--model", f"local:{tiny}"),
            *("--wiki", str(snapshot), "--max-steps", "4", "--json"),
        ],
    )
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)
    steps = {step["kind"]: step for step in result["trajectory"]}
    first, found, follow = steps["plan"]["action"].splitlines()
    assert first == "#E1 = Search[Ruritania]" and follow == "#E3 = Search[#E2]"
    assert found.startswith("#E2 = LLM[") and found.endswith("#E1]")
    bridge = [s for s in result["trajectory"] if s["action"].startswith("LLM[")][0]
    assert bridge["observation"] in RURITANIA and not bridge["observation"].startswith("Rur")
    if result["answer"] is not None:
        assert result["answer"] in RURITANIA + STRELSAU
        assert not result["answer"].startswith(("Rur", bridge["observation"][:4]))


def test_an_llm_step_copies_a_name_alone() -> None:
    from wikireact.models.local.answer_spans import answer_rules

    page = "The capital and largest city is Prague. Its river is the Vltava."
    rules = answer_rules([page], kind="name", names_only=True)
    assert rules is not None and '"Prague"' in rules
    assert "o0w0" not in rules.split("\n")[0] and "o0w7" not in rules.split("\n")[0]  # The, Its
    assert '"The" " "' not in rules


def test_answers_are_copied_from_the_sentences_that_share_the_asked_words() -> None:
    from wikireact.models.local.shaped_replies import focused

    page = "Ruritania is a kingdom in Europe. Its capital is Strelsau. Ruritania borders Graustark."
    assert focused((page,), {"capit"}, ("Ruritania",)) == ("Its capital is Strelsau.",)
    assert focused((page,), {"rurit"}, ("Ruritania",)) == (page,)  # a title's words: no focus
    assert focused((page,), {"river"}, ()) == (page,)


def test_a_bridge_answer_is_copied_from_the_clause_of_the_page_it_led_to(vocabulary: Any) -> None:
    question = "On which river does the capital of Ruritania stand?"
    plan = [
        PlannedStep(number=1, tool="Search", text="Ruritania", thought="", needs=[], page_of=None),
        PlannedStep(
            number=2, tool="LLM", text="Name it in #E1", thought="", needs=[1], page_of=None
        ),
        PlannedStep(number=3, tool="Search", text="#E2", thought="", needs=[2], page_of=None),
    ]
    led_to = "Strelsau is a city of Ruritania. Located on the Rassendyll River, it is the largest city in the Elphberg Union."
    evidence = {
        "#E1": RURITANIA + " The Zenda River flows north.",
        "#E2": "Strelsau",
        "#E3": led_to,
    }
    turns = _turns(solver_messages(question, worked_plan(plan, evidence)))
    grammar = local_reply_grammar(solver_form("hotpotqa"), turns, None, guard_rails=True)
    assert llama_accepts(vocabulary, grammar, "Finish[Rassendyll River]")
    for wrong in ("Elphberg Union", "Zenda River"):  # another clause, the first page
        assert not llama_accepts(vocabulary, grammar, f"Finish[{wrong}]")


def test_an_llm_step_asked_when_still_names_the_entity(vocabulary: Any) -> None:
    question = "On what date was the capital of Ruritania founded?"
    instruction = f"When was Ruritania founded, according to: {fenced(RURITANIA)}"
    turns = _turns(llm_messages(question, instruction))
    grammar = local_reply_grammar(LLM_FORM, turns, None, guard_rails=True)
    assert llama_accepts(vocabulary, grammar, "Strelsau")
    assert not llama_accepts(vocabulary, grammar, "Follow the instruction")


def test_when_the_hop_missed_the_answer_comes_from_the_first_page(vocabulary: Any) -> None:
    plan = [
        PlannedStep(number=1, tool="Search", text="Ruritania", thought="", needs=[], page_of=None),
        PlannedStep(number=2, tool="LLM", text="Name it #E1", thought="", needs=[1], page_of=None),
        PlannedStep(number=3, tool="Search", text="#E2", thought="", needs=[2], page_of=None),
    ]
    missed = "Could not find Strelsau. Similar: ['Ruritania']."
    evidence = {"#E1": RURITANIA, "#E2": "Strelsau", "#E3": missed}
    asked = "In which plain does the capital of Ruritania lie?"
    turns = _turns(solver_messages(asked, worked_plan(plan, evidence)))
    grammar = local_reply_grammar(solver_form("hotpotqa"), turns, None, guard_rails=True)
    assert llama_accepts(vocabulary, grammar, "Finish[Zenda]")
    assert not llama_accepts(vocabulary, grammar, "Finish[answer]")


def test_when_the_focus_holds_no_answer_the_whole_page_is_copied_from(vocabulary: Any) -> None:
    plan = [
        PlannedStep(number=1, tool="Search", text="Strelsau", thought="", needs=[], page_of=None)
    ]
    page = "Strelsau is the capital, largest city, and one of the provinces of Ruritania."
    turns = _turns(
        solver_messages(
            "Of which country is Strelsau the capital?", worked_plan(plan, {"#E1": page})
        )
    )
    grammar = local_reply_grammar(solver_form("hotpotqa"), turns, None, guard_rails=True)
    assert llama_accepts(vocabulary, grammar, "Finish[Ruritania]")
    assert not llama_accepts(vocabulary, grammar, "Finish[answer]")
