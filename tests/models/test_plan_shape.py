"""A small model's ReWOO plan takes the question's shape, read from its form and the titles it names.

The questions here are written for these tests (none is in an offline question set): the
shape comes from the question's wording alone, the titles from a title list (a snapshot's)
or, without one, from its capitalised words.
"""

from __future__ import annotations

import pytest

from wikireact.models.local.plan_shape import question_plan, question_titles

TITLES = {"Ruritania", "Strelsau", "The Prisoner of Zenda", "Anthony Hope", "Zenda", "Graustark"}


def is_title(text: str) -> bool:
    """Whether `text` is one of this test's titles."""
    return text in TITLES


@pytest.mark.parametrize(
    ("question", "shape", "first"),
    [
        ("On which river does the capital of Ruritania stand?", "bridge", ("Ruritania",)),
        (
            "In what year was the author of The Prisoner of Zenda born?",
            "bridge",
            ("The Prisoner of Zenda",),
        ),
        (
            "How far from Zenda is the city where the Prisoner of Zenda is set?",
            "bridge",
            ("The Prisoner of Zenda",),
        ),
        (
            "Who was the father of the author of The Prisoner of Zenda?",
            "bridge",
            ("The Prisoner of Zenda",),
        ),
        ("What is the capital of Ruritania?", "single", ("Ruritania",)),
        ("Who wrote The Prisoner of Zenda?", "single", ("The Prisoner of Zenda",)),
        ("Which is older, Ruritania or Graustark?", "comparison", ("Ruritania", "Graustark")),
        ("Were Anthony Hope and Zenda both British?", "comparison", ("Anthony Hope", "Zenda")),
    ],
)
def test_the_shape_follows_the_question_form(
    question: str, shape: str, first: tuple[str, ...]
) -> None:
    plan = question_plan(question, is_title)
    assert plan is not None and (plan.shape, plan.first) == (shape, first)


def test_a_question_naming_no_title_has_no_shape() -> None:
    assert question_plan("Who published the theory of general relativity?", is_title) is None


def test_titles_are_the_longest_runs_the_title_list_holds() -> None:
    asked = "Did Anthony Hope write The Prisoner of Zenda in Strelsau?"
    assert question_titles(asked, is_title) == ("Anthony Hope", "The Prisoner of Zenda", "Strelsau")


def test_without_a_title_list_titles_are_capitalised_runs() -> None:
    asked = "Which is older, the Republic of Ruritania or Graustark?"
    assert question_titles(asked, None) == ("Republic of Ruritania", "Graustark")
