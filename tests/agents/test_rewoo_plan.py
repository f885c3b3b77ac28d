"""Reading ReWOO plans: tolerant of how models write them, strict about what cannot run."""

from __future__ import annotations

import pytest

from wikireact.agents.rewoo import plan as plan_module
from wikireact.agents.rewoo.plan import Plan, PlanError, read_plan, substitute


def test_the_papers_form_is_read_with_dependencies() -> None:
    plan = read_plan(
        "Plan: Search for the magazine.\n"
        "#E1 = Search[Arthur's Magazine]\n"
        "Plan: Its founding year.\n"
        "#E2 = Lookup[founded]\n"
        "Plan: Compare.\n"
        "#E3 = LLM[Which came first: #E2 or #E1?]",
        7,
    )
    assert isinstance(plan, Plan)
    assert [(s.number, s.tool, s.needs, s.page_of) for s in plan.steps] == [
        (1, "Search", (), None),
        (2, "Lookup", (1,), 1),
        (3, "LLM", (2, 1), None),
    ]
    assert plan.steps[1].thought == "Its founding year."
    assert plan.reasoning == "Search for the magazine. Its founding year. Compare."


def test_models_variations_are_tolerated() -> None:
    plan = read_plan(
        "Here is my plan.\n"
        "1. **Plan:** find him\n"
        "- #E1 = search[ Scott Derrickson ]\n"
        "* #E2=LOOKUP[born]\n"
        "`#E3 = llm[Where was he born? #E2]`",
        7,
    )
    assert isinstance(plan, Plan)
    assert [(s.tool, s.text) for s in plan.steps] == [
        ("Search", "Scott Derrickson"),
        ("Lookup", "born"),
        ("LLM", "Where was he born? #E2"),
    ]
    assert plan.steps[0].thought == "find him"


def test_a_forward_reference_without_a_cycle_runs_in_dependency_order() -> None:
    plan = read_plan("#E2 = LLM[Summarise #E1]\n#E1 = Search[Ed Wood]", 7)
    assert isinstance(plan, Plan) and plan.steps[0].needs == (1,)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("#E1 = Search[Ed Wood]\n#E1 = Search[Tim Burton]", "#E1 is defined twice"),
        ("#E1 = Search[]", "Search needs a non-empty input"),
        ("#Ex = Search[Ed Wood]", "is not a step of the form"),
        ("#E1 = Search[#E1]", "cycle (#E1 -> #E1)"),
        ("#E1 = LLM[#E3]\n#E2 = LLM[#E1]\n#E3 = LLM[#E2]", "cycle (#E1 -> #E3 -> #E2 -> #E1)"),
        ("#E1 = Search[Ed Wood] and more", "is not a step of the form"),
    ],
)
def test_plans_that_cannot_run_say_why(text: str, message: str) -> None:
    found = read_plan(text, 7)
    assert isinstance(found, PlanError) and message in found.message


def test_substitution_replaces_whole_references_only() -> None:
    evidence = {"#E1": "one", "#E10": "ten"}
    assert substitute("#E1, #E10 and #E2", evidence) == "one, ten and #E2"


def test_hostile_plans_are_read_without_raising() -> None:
    for text in (
        "#E1 = Search[" + "[" * 50_000,
        "\n" * 100_000 + "#E1 = Search[x]",
        "#E1 = LLM[" + "#E" * 30_000 + "]",
        "Plan: " + " " * 100_000 + "x",
        "#E" + "9" * 5_000 + " = Search[x]",
        "#E1 = LLM[#E" + "9" * 5_000 + "]",
    ):
        assert isinstance(read_plan(text, 7), Plan | PlanError)


def test_a_reference_with_leading_zeros_names_the_same_evidence() -> None:
    plan = read_plan("#E1 = Search[Ed Wood]\n#E2 = LLM[Where was he born? #E01 #E001]", 7)
    assert isinstance(plan, Plan) and plan.steps[1].needs == (1,)
    # what the step waits for is what is substituted: one rule for both
    evidence = {"#E1": "Ed Wood's page"}
    assert substitute("#E01, #E001 and #E1", evidence) == (
        "Ed Wood's page, Ed Wood's page and Ed Wood's page"
    )
    assert substitute("#E1 and #E10", evidence) == "Ed Wood's page and #E10"
    assert substitute("#E1", evidence, lambda text: f"«{text}»") == "«Ed Wood's page»"


def big_plan(steps: int) -> str:
    """A plan of `steps` valid steps, each with its reasoning line."""
    return "".join(f"Plan: step {n}.\n#E{n} = Search[Page {n}]\n" for n in range(1, steps + 1))


def test_a_plan_over_the_cap_is_refused_and_read_only_up_to_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scanned = 0
    unmarked = plan_module._unmarked

    def counting(raw: str) -> str:
        nonlocal scanned
        scanned += 1
        return unmarked(raw)

    monkeypatch.setattr(plan_module, "_unmarked", counting)
    counts = []
    for size in (1_000_000, 2_000_000):  # characters
        text = big_plan(size // 30)
        assert len(text) >= size
        scanned = 0
        found = read_plan(text, 7)
        assert found == PlanError(
            "the plan has more than 7 steps; the step budget allows at most 7."
        )
        counts.append(scanned)
    # the lines of 7 steps and their reasons, and the first step past the cap: no more
    assert counts == [2 * 7 + 2, 2 * 7 + 2]
