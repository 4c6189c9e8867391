"""What every provider fake shares: a script of steps and a log of what the client sent."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeAlias, TypeVar

from pipecat_steward.testing.script import Say, Step

Received = TypeVar("Received")
StepSource: TypeAlias = Step | Callable[[Any], Step]
"""A scripted step, or a callable that picks the step from what the client sent."""

DEFAULT_REPLY = Say("Okay.")


class ScriptedFake(Generic[Received]):
    """A script of responses and a log of received client messages, with waiting helpers."""

    def __init__(self, script: Iterable[StepSource] = (), *, default: Step = DEFAULT_REPLY):
        """Create the fake.

        Args:
            script: One step per model response, in order.
            default: The response once the script is exhausted.

        """
        self.script: list[StepSource] = list(script)
        self.default = default
        self.received: list[Received] = []
        self._changed = asyncio.Event()
        self._ids = itertools.count(1)

    def next_step(self, request: Any) -> Step:
        """Pop the next step (calling it with `request` when it is dynamic)."""
        if not self.script:
            return self.default
        step = self.script.pop(0)
        return step(request) if callable(step) else step

    def new_id(self, prefix: str) -> str:
        """Return a deterministic id like `call_3`."""
        return f"{prefix}_{next(self._ids)}"

    def record(self, message: Received) -> None:
        """Log a client message and wake anyone waiting for one."""
        self.received.append(message)
        self._changed.set()

    async def wait_for(
        self, predicate: Callable[[Received], bool], *, timeout: float = 5.0, count: int = 1
    ) -> list[Received]:
        """Wait until `count` received messages satisfy `predicate`; return them."""
        async with asyncio.timeout(timeout):
            while True:
                matches = [m for m in self.received if predicate(m)]
                if len(matches) >= count:
                    return matches
                self._changed.clear()
                await self._changed.wait()
