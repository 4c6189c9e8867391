"""``Oversight``: the port through which supervision reaches a session.

A session is built with its ``Oversight`` (its constructor takes one, or makes an empty one);
the procedure monitor is built with the same port (its constructor takes the session's) and
plugs into it when it starts. Through the port the session asks for a verdict when a gate
waits on judge steps (``judge``), and lets queued corrections ride tool results on channels
with no silent note (``riders``). Nobody sets a session's fields from outside: without a
monitor the port is empty, and gates stay deterministic.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pipecat_steward.core.procedures import AwaitJudge, Verdict

__all__ = ["Judge", "Oversight", "Rider"]

Judge = Callable[[AwaitJudge], Awaitable[Verdict | None]]
"""Asked for a verdict when a gate waits on judge steps (the monitor, or a test)."""

Rider = Callable[[], str | None]
"""Gives a queued correction to ride the next tool result, or None."""


class Oversight:
    """What supervises one session: at most one judge, and the riders of tool results.

    Attributes:
        judge: The judge gates ask (None: no monitor; a judge gate then vetoes, naming it).
        riders: Asked in order for a correction on every tool result.
    """

    def __init__(self, judge: Judge | None = None) -> None:
        self.judge = judge
        self.riders: list[Rider] = []

    def plug(self, judge: Judge, rider: Rider | None = None) -> None:
        """A monitor starts: it becomes the judge and, when given, a rider."""
        self.judge = judge
        if rider is not None and rider not in self.riders:
            self.riders.append(rider)

    def unplug(self, judge: Judge, rider: Rider | None = None) -> None:
        """A monitor stops: what it plugged in is removed (another monitor's stays)."""
        if self.judge == judge:
            self.judge = None
        if rider is not None and rider in self.riders:
            self.riders.remove(rider)
