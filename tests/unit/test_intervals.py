"""A benchmark goal is decided by a whole bootstrap interval, not by one noisy figure."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

import pytest

from pipecat_steward.testing.intervals import Interval, paired_interval, percentile, verdict


@pytest.mark.parametrize(
    ("low", "high", "at_most", "expected"),
    [
        (1.10, 1.19, 1.2, "met"),
        (1.15, 1.20, 1.2, "met"),
        (1.21, 1.30, 1.2, "NOT met"),
        (1.15, 1.25, 1.2, "undecided at this precision"),
        (1.20, 1.21, 1.2, "undecided at this precision"),
        (-0.40, -0.01, 0.0, "met"),
        (-0.40, 0.00, 0.0, "met"),
        (0.01, 0.50, 0.0, "NOT met"),
        (-0.10, 0.10, 0.0, "undecided at this precision"),
    ],
)
def test_the_whole_interval_decides(low: float, high: float, at_most: float, expected: str) -> None:
    assert verdict(Interval((low + high) / 2, low, high), at_most) == expected


def _gap(q: float):
    def statistic(pairs: Sequence[tuple[float, float]]) -> float:
        return percentile([a for a, _ in pairs], q) - percentile([b for _, b in pairs], q)

    return statistic


@pytest.mark.parametrize("seed", range(5))
def test_a_constant_shift_has_no_spread_at_any_percentile(seed: int) -> None:
    rng = random.Random(seed)
    base = [rng.uniform(5, 15) for _ in range(60)]
    pairs = [(b + 0.5, b) for b in base]
    for q in (50, 95, 99):
        gap = paired_interval(pairs, _gap(q))
        assert (gap.value, gap.low, gap.high) == pytest.approx((0.5, 0.5, 0.5))


@pytest.mark.parametrize("seed", range(5))
def test_noise_gives_a_repeatable_interval_that_holds_the_value(seed: int) -> None:
    rng = random.Random(seed)
    pairs = [(rng.gauss(10.3, 1), rng.gauss(10, 1)) for _ in range(200)]

    def mean_gap(sample: Sequence[tuple[float, float]]) -> float:
        return statistics.fmean(a - b for a, b in sample)

    first = paired_interval(pairs, mean_gap)
    assert first.low < first.value < first.high
    assert first.high - first.low < 1.0  # 200 pairs of unit noise pin the mean to ±0.3
    assert paired_interval(pairs, mean_gap) == first  # seeded: a documented figure reproduces
    assert paired_interval(pairs, mean_gap, seed=seed + 1) != first


def test_nothing_to_resample_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one pair"):
        paired_interval([], _gap(50))
    with pytest.raises(ValueError, match="no samples"):
        percentile([], 50)


@pytest.mark.parametrize(
    ("q", "expected"), [(0, 1.0), (1, 1.0), (50, 50.0), (99, 99.0), (100, 100.0)]
)
def test_percentile_is_the_nearest_rank(q: float, expected: float) -> None:
    samples = [float(n) for n in range(100, 0, -1)]
    assert percentile(samples, q) == expected
