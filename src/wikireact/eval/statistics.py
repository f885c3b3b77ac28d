"""Uncertainty of evaluation scores: seeded bootstrap intervals and McNemar's exact test.

Pure Python (the standard library's `random` and `math`), so a report needs no numpy.
Every bootstrap is seeded (`BOOTSTRAP_SEED`): the same scores give the same interval on
every machine and every run of the report.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
RESAMPLES = 2000
BOOTSTRAP_SEED = 233
"""The bootstrap's seed (the paper's sampling seed, for want of a better one): reports repeat."""


@dataclass(frozen=True)
class Interval:
    """A confidence interval around an estimate (all three on the scores' scale)."""

    estimate: float
    low: float
    high: float


def mean(values: Sequence[float]) -> float:
    """Return the arithmetic mean of `values` (0.0 for none)."""
    return sum(values) / len(values) if values else 0.0


def quantile(ordered: Sequence[float], q: float) -> float:
    """Return the `q` quantile of sorted `ordered`, interpolating linearly (numpy's default)."""
    if not ordered:
        raise ValueError("the quantile of no values is undefined")
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def bootstrap_means(
    values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[float]:
    """Return the means of `resamples` resamples of `values` with replacement (same size), sorted.

    When every value is 0 or 1 (EM, accuracy), a resample's sum is Binomial(n, mean) exactly,
    and is drawn as such (one random number per resample, not n): a 7,405-claim run takes
    milliseconds. Other values are drawn one by one.
    """
    if not values:
        raise ValueError("cannot bootstrap no values")
    rng = random.Random(seed)
    size = len(values)
    if all(value in (0.0, 1.0) for value in values):
        cdf = binomial_cdf(size, sum(values) / size)
        return sorted(
            min(bisect.bisect_left(cdf, rng.random()), size) / size for _ in range(resamples)
        )
    return sorted(sum(rng.choices(values, k=size)) / size for _ in range(resamples))


def binomial_cdf(trials: int, p: float) -> list[float]:
    """Return P(X <= k) for k = 0..trials, X ~ Binomial(trials, p) (log-space: no underflow)."""
    if p <= 0.0 or p >= 1.0:
        return [1.0] * (trials + 1) if p <= 0.0 else [0.0] * trials + [1.0]
    log_p, log_q = math.log(p), math.log1p(-p)
    whole = math.lgamma(trials + 1)
    pmf = (
        math.exp(
            whole
            - math.lgamma(k + 1)
            - math.lgamma(trials - k + 1)
            + k * log_p
            + (trials - k) * log_q
        )
        for k in range(trials + 1)
    )
    return list(itertools.accumulate(pmf))


def bootstrap_interval(
    values: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Interval:
    """Return the mean of `values` with its percentile bootstrap interval at `confidence`.

    The values are one score per question (e.g. EM, 0 or 1): resampling questions is
    what a different sample of the same size from the same data would do.
    """
    means = bootstrap_means(values, resamples=resamples, seed=seed)
    tail = (1 - confidence) / 2
    return Interval(mean(values), quantile(means, tail), quantile(means, 1 - tail))


def paired_bootstrap_interval(
    first: Sequence[float],
    second: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Interval:
    """Return mean(second - first) over paired questions, with its bootstrap interval.

    `first[i]` and `second[i]` are two methods' scores on the same question i; the
    questions are resampled together, so what the questions share cancels out.
    """
    if len(first) != len(second):
        raise ValueError("paired scores need one score of each method per question")
    differences = [b - a for a, b in zip(first, second, strict=True)]
    return bootstrap_interval(differences, confidence=confidence, resamples=resamples, seed=seed)


def mcnemar_exact_p(only_first: int, only_second: int) -> float:
    """Return the two-sided exact McNemar p-value of two methods' right/wrong on the same questions.

    `only_first`: questions the first method got right and the second wrong;
    `only_second`: the other way round. Under the null hypothesis each such discordant
    question is either way with probability 1/2, so the p-value is twice the binomial tail
    of the smaller count (at most 1).
    """
    if only_first < 0 or only_second < 0:
        raise ValueError("discordant counts cannot be negative")
    discordant = only_first + only_second
    smaller = min(only_first, only_second)
    tail = sum(math.comb(discordant, k) for k in range(smaller + 1)) / 2**discordant
    return min(1.0, 2 * tail)
