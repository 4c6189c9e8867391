"""`WaitBudget`: a bound on a test's wait that the machine's load cannot trip.

A test harness waits for things (a pipeline to start, a turn to settle, a pipeline to end) and
must still fail when one never happens. A bound in seconds of the clock does that, but it also
fails a call that is only slow: with hundreds of calls in one process, or on a busy CI machine,
every call moves more slowly, and a scenario that passes alone times out. A `WaitBudget` is
spent by the waiter's own polls instead: each poll costs its interval, however late the loop
runs it. On an idle loop the bound lasts about as long as its seconds; on a loaded one it
stretches with the load, since each poll comes later. Something that never happens still fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = ["POLL_S", "WaitBudget"]

POLL_S = 0.005
"""The default interval between two polls, in seconds."""

_ROUNDING = 1e-9  # what adding up float intervals may leave of a spent budget


class WaitBudget:
    """A bound on one wait, spent by polls (see the module docstring).

    Args:
        seconds: The bound on an idle loop: ``seconds / interval`` polls in all.
        what: What is awaited, for the ``TimeoutError`` message.
    """

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.left = seconds

    async def until(self, ready: Callable[[], bool], interval: float = POLL_S) -> None:
        """Poll ``ready`` every ``interval`` until it is true.

        Raises:
            TimeoutError: The budget ran out first.
        """
        while not ready():
            await self.poll(interval)

    async def poll(self, interval: float = POLL_S) -> None:
        """Spend ``interval`` of the budget and sleep that long.

        Raises:
            TimeoutError: The budget was already spent.
        """
        self.spend(interval)
        await asyncio.sleep(interval)

    async def first(self, *aws: asyncio.Future[Any], interval: float = POLL_S) -> None:
        """Wait until one of ``aws`` is done, spending ``interval`` per wait with none done.

        Raises:
            TimeoutError: The budget ran out first.
        """
        while not any(a.done() for a in aws):
            self.spend(interval)
            await asyncio.wait(aws, timeout=interval, return_when=asyncio.FIRST_COMPLETED)

    def spend(self, interval: float) -> None:
        """Take ``interval`` off the budget.

        Raises:
            TimeoutError: The budget was already spent.
        """
        if self.left <= _ROUNDING:
            raise TimeoutError(
                f"{self.what}: still waiting after {self.seconds:g} s of polls "
                "(a bound counted in polls, so a loaded machine stretches it)"
            )
        self.left -= interval
