"""What every provider fake shares: start and stop on 127.0.0.1, a script of steps, a log.

``LocalServer`` is the one start/stop of every fake: it listens on 127.0.0.1 from ``start`` (or
``async with``) until ``stop``, on a free port the first time and on the same port when started
again; ``start`` returns once the port accepts connections, and ``stop`` cancels the fake's
background work and closes the listener and what it opened. ``ScriptedFake`` adds the script
of responses and the log of what the client sent; ``RespondingFake`` runs each response in the
background after a time to first audio, and knows when every response it started has ended.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from contextlib import AsyncExitStack
from ssl import SSLContext
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from pipecat_steward.testing.lifecycle import Lifecycle
from pipecat_steward.testing.script import Say, Step

if TYPE_CHECKING:
    from aiohttp import web
    from websockets.asyncio.server import ServerConnection

HOST = "127.0.0.1"
Received = TypeVar("Received")
T = TypeVar("T")
StepSource: TypeAlias = Step | Callable[[Any], Step]
"""A scripted step, or a callable that picks the step from what the client sent."""

DEFAULT_REPLY = Say("Okay.")


class LocalServer(Lifecycle):
    """A fake's lifetime: listening on 127.0.0.1 between ``start`` and ``stop``.

    Subclasses open their listener in ``_listen`` (with ``listen_http`` or
    ``listen_websocket``), and run background work with ``spawn`` so ``stop`` ends it.

    Attributes:
        port: The port listened on (0 before the first start).
    """

    def __init__(self) -> None:
        self.port = 0
        self._stack: AsyncExitStack | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def running(self) -> bool:
        """Whether the fake is started and not stopped."""
        return self._stack is not None

    async def start(self) -> None:
        """Listen (on the port of an earlier start, else a free one); a no-op when running."""
        if self._stack is not None:
            return
        stack = AsyncExitStack()
        try:
            self.port = await self._listen(stack, self.port)
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack

    async def stop(self) -> None:
        """Cancel the background work, then close the listener and what it opened."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    def spawn(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` in the background until it ends or the fake stops; its task."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _listen(self, stack: AsyncExitStack, port: int) -> int:
        """Open the listener on ``port`` (0: any), push its closing on ``stack``; the port."""
        raise NotImplementedError


async def listen_http(stack: AsyncExitStack, app: web.Application, port: int = 0) -> int:
    """Serve ``app`` over HTTP on 127.0.0.1 until ``stack`` closes; return the port."""
    from aiohttp import web

    # Short shutdown: an open client connection must not hold a test's teardown.
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    stack.push_async_callback(runner.cleanup)
    await web.TCPSite(runner, HOST, port).start()
    return runner.addresses[0][1]


async def listen_websocket(
    stack: AsyncExitStack,
    handler: Callable[[ServerConnection], Awaitable[None]],
    port: int = 0,
    ssl: SSLContext | None = None,
) -> int:
    """Serve websocket connections with ``handler`` on 127.0.0.1 until ``stack`` closes."""
    from websockets.asyncio.server import serve

    server = await serve(handler, HOST, port, ssl=ssl)

    async def close() -> None:
        server.close()
        await server.wait_closed()

    stack.push_async_callback(close)
    return server.sockets[0].getsockname()[1]


class ScriptedFake(LocalServer, Generic[Received]):
    """A script of responses and a log of received client messages, with waiting helpers."""

    def __init__(self, script: Iterable[StepSource] = (), *, default: Step = DEFAULT_REPLY):
        """Create the fake.

        Args:
            script: One step per model response, in order.
            default: The response once the script is exhausted.

        """
        super().__init__()
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


class RespondingFake(ScriptedFake[Received]):
    """A speech-to-speech fake: each response runs in the background after ``latency``.

    A subclass starts a response with ``start_response`` and writes it in ``_respond``; its
    settler waits for ``responses_ended`` (or checks ``responding``) so a harness settles on
    the responses' explicit end, never on a quiet spell.
    """

    def __init__(
        self,
        script: Iterable[StepSource] = (),
        *,
        default: Step = DEFAULT_REPLY,
        latency: float = 0.0,
    ) -> None:
        """Create the fake.

        Args:
            script: One step per model response, in order.
            default: The response once the script is exhausted.
            latency: Seconds before each response starts, as a provider's time to first audio.

        """
        super().__init__(script, default=default)
        self.latency = latency
        self._responding: set[asyncio.Task[None]] = set()

    @property
    def responding(self) -> bool:
        """Whether a response started by ``start_response`` has not ended yet."""
        return bool(self._responding)

    def start_response(self, request: Any) -> None:
        """Answer ``request`` with the next step, in the background, after ``latency``."""
        task = self.spawn(self._respond_after_latency(self.next_step(request)))
        self._responding.add(task)
        task.add_done_callback(self._response_ended)

    async def responses_ended(self) -> None:
        """Return once every response started so far has ended (or failed)."""
        await asyncio.gather(*self._responding, return_exceptions=True)

    def _response_ended(self, task: asyncio.Task[None]) -> None:
        self._responding.discard(task)

    async def _respond_after_latency(self, step: Step) -> None:
        if self.latency:
            await asyncio.sleep(self.latency)
        await self._respond(step)

    async def _respond(self, step: Step) -> None:
        """Send the response ``step`` to the client."""
        raise NotImplementedError
