"""The report's statistics against values known in closed form or worked by hand."""

from __future__ import annotations

import math

import pytest

from wikireact.eval.statistics import (
    Interval,
    binomial_cdf,
    bootstrap_interval,
    bootstrap_means,
    mcnemar_exact_p,
    paired_bootstrap_interval,
    quantile,
)


@pytest.mark.parametrize(
    ("only_first", "only_second", "p"),
    [
        (1, 9, 2 * (1 + 10) / 2**10),  # 2 * P(X <= 1), X ~ Binomial(10, 1/2) = 22/1024
        (9, 1, 22 / 1024),  # symmetric
        (0, 5, 2 / 2**5),  # 2 * P(X = 0) = 0.0625
        (2, 8, 2 * (1 + 10 + 45) / 2**10),  # 0.109375
        (3, 3, 1.0),  # 2 * P(X <= 3 | 6) = 84/64, capped at 1
        (0, 0, 1.0),  # no discordant question: no evidence either way
    ],
)
def test_mcnemar_exact_p_by_hand(only_first: int, only_second: int, p: float) -> None:
    assert mcnemar_exact_p(only_first, only_second) == pytest.approx(p, rel=1e-12)


def test_mcnemar_refuses_negative_counts() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 3)


def test_quantile_interpolates_as_numpy_does() -> None:
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.25) == 1.75
    assert quantile([7.0], 0.975) == 7.0


def test_bootstrap_spread_matches_the_closed_form() -> None:
    # The bootstrap distribution of a mean of n draws from 30 ones and 70 zeros has
    # variance p(1-p)/n exactly; 10,000 resamples estimate its sd within about 1%.
    values = [1.0] * 30 + [0.0] * 70
    means = bootstrap_means(values, resamples=10_000)
    average = sum(means) / len(means)
    sd = math.sqrt(sum((m - average) ** 2 for m in means) / (len(means) - 1))
    assert average == pytest.approx(0.3, abs=0.003)
    assert sd == pytest.approx(math.sqrt(0.3 * 0.7 / 100), rel=0.05)
    interval = bootstrap_interval(values, resamples=10_000)
    normal = 1.959964 * math.sqrt(0.3 * 0.7 / 100)  # 0.0898
    assert interval.estimate == 0.3
    assert interval.low == pytest.approx(0.3 - normal, abs=0.015)
    assert interval.high == pytest.approx(0.3 + normal, abs=0.015)


def test_bootstrap_of_other_scores_matches_the_closed_form_too() -> None:
    # F1-like scores (not 0/1) are resampled one by one: variance sigma^2/n, sigma^2 = 1/6 here
    values = [0.0, 0.5, 1.0] * 20
    means = bootstrap_means(values, resamples=10_000)
    average = sum(means) / len(means)
    sd = math.sqrt(sum((m - average) ** 2 for m in means) / (len(means) - 1))
    assert average == pytest.approx(0.5, abs=0.005)
    assert sd == pytest.approx(math.sqrt(1 / 6 / 60), rel=0.05)


def test_binomial_cdf_against_hand_values() -> None:
    assert binomial_cdf(2, 0.5) == pytest.approx([0.25, 0.75, 1.0])
    assert binomial_cdf(3, 0.0) == [1.0] * 4 and binomial_cdf(3, 1.0) == [0.0, 0.0, 0.0, 1.0]
    assert binomial_cdf(7405, 0.3)[-1] == pytest.approx(1.0)  # (0.7)^7405 underflows: log space


def test_bootstrap_of_two_values_draws_each_mean_with_its_probability() -> None:
    # resamples of [0, 1] have mean 0, 1/2 or 1 with probability 1/4, 1/2, 1/4
    means = bootstrap_means([0.0, 1.0], resamples=10_000)
    assert set(means) == {0.0, 0.5, 1.0}
    assert means.count(0.5) / len(means) == pytest.approx(0.5, abs=0.02)
    assert bootstrap_interval([0.0, 1.0]) == Interval(0.5, 0.0, 1.0)


def test_bootstrap_is_seeded_and_degenerate_data_has_no_spread() -> None:
    values = [float(i % 3 == 0) for i in range(50)]
    assert bootstrap_interval(values) == bootstrap_interval(values)
    assert bootstrap_means(values, seed=1) != bootstrap_means(values, seed=2)
    assert bootstrap_interval([0.5] * 9) == Interval(0.5, 0.5, 0.5)
    with pytest.raises(ValueError):
        bootstrap_interval([])


def test_paired_bootstrap_cancels_what_the_questions_share() -> None:
    first = [0.1 * i for i in range(10)]
    assert paired_bootstrap_interval(first, first) == Interval(0.0, 0.0, 0.0)
    shifted = paired_bootstrap_interval(first, [x + 0.25 for x in first])
    assert shifted.estimate == pytest.approx(0.25)
    assert shifted.low == pytest.approx(0.25) and shifted.high == pytest.approx(0.25)
    with pytest.raises(ValueError):
        paired_bootstrap_interval([1.0], [1.0, 0.0])
