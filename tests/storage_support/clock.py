"""A settable clock for expiry tests."""

from __future__ import annotations


class FakeClock:
    """Seconds since the epoch, moved by hand."""

    def __init__(self, now: float = 1_900_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
