"""Decide a benchmark's goal from a 95 % bootstrap interval, not from one noisy figure.

On a shared machine one run's figure moves with whatever else runs, in every variant. The
benches therefore pair their variants (each pair ran back to back), resample the pairs with a
fixed seed (so a documented figure reproduces from the same samples) and call a goal met only
when the whole interval is within it, not met when all of it is beyond, and undecided otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Interval", "Verdict", "paired_interval", "percentile", "verdict"]

Pair = tuple[float, float]
Verdict = Literal["met", "NOT met", "undecided at this precision"]


@dataclass(frozen=True)
class Interval:
    """A statistic over all pairs and its 95 % bootstrap interval."""

    value: float
    low: float
    high: float


def paired_interval(
    pairs: Sequence[Pair],
    statistic: Callable[[Sequence[Pair]], float],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """``statistic`` over ``pairs``, and where 95 % of its resamples over the pairs fall.

    Raises:
        ValueError: There are no pairs to resample.
    """
    if not pairs:
        raise ValueError("paired_interval needs at least one pair of samples")
    rng = random.Random(seed)
    spread = sorted(statistic(rng.choices(pairs, k=len(pairs))) for _ in range(resamples))
    return Interval(
        statistic(pairs), spread[int(0.025 * resamples)], spread[int(0.975 * resamples) - 1]
    )


def verdict(interval: Interval, at_most: float) -> Verdict:
    """Met when the whole interval is at most the goal, not met when all of it is above."""
    if interval.high <= at_most:
        return "met"
    return "NOT met" if interval.low > at_most else "undecided at this precision"


def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of ``samples`` by nearest rank (``q`` in 0..100).

    Raises:
        ValueError: ``samples`` is empty.
    """
    if not samples:
        raise ValueError("percentile of no samples")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]
