"""Session events and the bus that carries them off the frame path.

The relay (`pipecat_steward.pipecat.relay.StewardRelay`) turns pipecat frames into the closed
set of events below; the monitor, the extractor and the checkpointer subscribe to them. A
subscriber runs in its own task with its own queue, so it can be slow or raise without
delaying frames or other subscribers: exceptions are logged and counted, never propagated.
A tap (`EventBus.tap`) is the exception: a few microseconds of bookkeeping run in place, as
the event is published, for a reader that would otherwise cost a task wake on the frame path.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from loguru import logger

TranscriptSource = Literal["cascade", "s2s"]
"""Where a user transcript came from: an STT service (downstream) or a speech-to-speech
service (upstream, `user_id=""`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UserTranscript:
    """A final user transcript.

    Attributes:
        text: The transcribed text.
        user_id: The transport's user id; empty for speech-to-speech services.
        source: `cascade` (STT, travelling downstream) or `s2s` (travelling upstream).
        at_ns: Pipeline clock time of the push, in nanoseconds.
        turn: The caller turn it belongs to, stamped by the relay from the session's
            `CallerTurns` (0 when the relay has none); transcripts the aggregator merges
            into one user message share it.
        spaced: The text carries its own spaces to the transcripts around it (the frame's
            `includes_inter_frame_spaces`), which decides how the aggregator joins them.

    """

    text: str
    user_id: str
    source: TranscriptSource
    at_ns: int = 0
    turn: int = 0
    spaced: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class UserInterimTranscript:
    """An interim (or eager) transcript: the STT service's guess at the caller's words.

    Never published on the bus and no ``SessionEvent``: a guess is no caller turn, so no
    subscriber, trace or ledger receives it. The relay hands it in place to the readers
    registered with ``StewardRelay.on_interim`` (the steward's anticipation), and only for a
    cascade (an STT service pushing downstream).

    Attributes:
        text: The words guessed so far for the segment being spoken; the segment's final
            transcript replaces them.
        turn: The caller turn the words would join (``CallerTurns.upcoming``).
        spaced: As ``UserTranscript.spaced``.
    """

    text: str
    turn: int = 0
    spaced: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantTextComplete:
    """The LLM finished generating one response; playout may still be running.

    Attributes:
        text: The concatenated `LLMTextFrame` text of the response.
        at_ns: Pipeline clock time of the `LLMFullResponseEndFrame` push.

    """

    text: str
    at_ns: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantTurnWritten:
    """The assistant aggregator wrote an assistant turn into the context.

    Attributes:
        text: The text written (only what was spoken when a barge-in cut it short).
        at_ns: Pipeline clock time of the `LLMContextAssistantTurnFrame` push.

    """

    text: str
    at_ns: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class BotStartedSpeaking:
    """Bot audio started playing."""

    at_ns: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class BotStoppedSpeaking:
    """Bot audio stopped playing."""

    at_ns: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class UserStartedSpeaking:
    """The caller started speaking (VAD or the turn strategy said so)."""

    at_ns: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Interruption:
    """A barge-in (or any `InterruptionFrame`) cut the bot short."""

    at_ns: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionCallStarted:
    """A tool call is in progress.

    Attributes:
        name: The function name.
        args: The call's arguments.
        tool_call_id: The provider's (or generated) call id.
        at_ns: Pipeline clock time of the `FunctionCallInProgressFrame` push.

    """

    name: str
    args: Mapping[str, Any]
    tool_call_id: str
    at_ns: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionCallResult:
    """A tool call produced its (final or intermediate) result.

    Attributes:
        name: The function name.
        tool_call_id: The call id the result answers.
        result: The JSON-serialisable result the handler returned.
        error: Set when the handler failed.
        at_ns: Pipeline clock time of the `FunctionCallResultFrame` push.

    """

    name: str
    tool_call_id: str
    result: Any
    error: str | None = None
    at_ns: int = 0


SessionEvent: TypeAlias = (
    UserTranscript
    | AssistantTextComplete
    | AssistantTurnWritten
    | BotStartedSpeaking
    | BotStoppedSpeaking
    | UserStartedSpeaking
    | Interruption
    | FunctionCallStarted
    | FunctionCallResult
)
"""The closed set of events the relay publishes."""

Subscriber: TypeAlias = Callable[[SessionEvent], Awaitable[None] | None]
"""A sync or async callable taking one event. Sync subscribers run on the event loop, off
the frame path: keep them quick (they cannot yield)."""

Tap: TypeAlias = Callable[[SessionEvent], None]
"""A sync callable run in place as an event is published (see `EventBus.tap`)."""


@dataclass(slots=True)
class SubscriberStats:
    """Delivery counters for one subscriber.

    Attributes:
        delivered: Events handed to the subscriber (including ones it raised on).
        errors: Events on which the subscriber raised.
        dropped: Events dropped because its queue was full.

    """

    delivered: int = 0
    errors: int = 0
    dropped: int = 0


@dataclass(eq=False, slots=True)
class Subscription:
    """A subscriber registered on an `EventBus`; pass it to `EventBus.unsubscribe`."""

    name: str
    fn: Subscriber
    queue: asyncio.Queue[SessionEvent]
    stats: SubscriberStats = field(default_factory=SubscriberStats)
    task: asyncio.Task[None] | None = None
    kinds: tuple[type[SessionEvent], ...] = ()
    """The event types it receives (empty: every event)."""


class EventBus:
    """Fan-out of session events to subscribers, each in its own task.

    `publish` never awaits and never raises, so it is safe to call from an observer or a
    processor. Tasks start lazily on the first publish inside a running event loop.
    """

    def __init__(self, *, max_queue: int = 10_000) -> None:
        """Create an empty bus.

        Args:
            max_queue: Per-subscriber queue bound; events beyond it are dropped and counted.

        """
        self._max_queue = max_queue
        self._subs: list[Subscription] = []
        self._after: list[Callable[[], None]] = []
        self._taps: list[tuple[tuple[type[SessionEvent], ...], Tap]] = []
        # The loop a run of the after-publish callbacks is queued on (a closed loop's run
        # never comes: a publish on another loop queues its own).
        self._after_queued: asyncio.AbstractEventLoop | None = None
        self._after_late = False  # published since it was queued: it moves behind the wakes
        self._closed = False

    @property
    def subscriptions(self) -> tuple[Subscription, ...]:
        """The current subscriptions, in registration order."""
        return tuple(self._subs)

    def subscribe(
        self,
        fn: Subscriber,
        *,
        name: str | None = None,
        kinds: tuple[type[SessionEvent], ...] = (),
    ) -> Subscription:
        """Register `fn` to receive the events published from now on.

        Args:
            fn: The subscriber, sync or async.
            name: A label for logs and stats.
            kinds: Only events of these types reach it (empty: every event); a subscriber
                that reads two kinds of the many a turn publishes is not woken for the rest.
        """
        label = name or getattr(fn, "__qualname__", None) or repr(fn)
        queue: asyncio.Queue[SessionEvent] = asyncio.Queue(self._max_queue)
        sub = Subscription(name=label, fn=fn, queue=queue, kinds=kinds)
        self._subs.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop delivering to `sub`; events already queued for it are discarded."""
        if sub in self._subs:
            self._subs.remove(sub)
        if sub.task is not None:
            sub.task.cancel()

    def tap(self, fn: Tap, *, kinds: tuple[type[SessionEvent], ...]) -> None:
        """Call ``fn`` in place as each event of ``kinds`` is published, before any subscriber.

        For bookkeeping of a few microseconds (noting the caller's words, scheduling a timer)
        that should not cost a task wake each time: no queue, no task, nothing awaited. The
        relay publishes as frames are pushed, so a tap runs on the frame path: keep it quick.
        An exception it raises is logged, never propagated.
        """
        self._taps.append((kinds, fn))

    def after_publish(self, callback: Callable[[], None]) -> None:
        """Run `callback` on the loop after publishes, behind the subscribers they woke.

        For a reader that only needs to know *that* events were published (the event
        recorder): no queue and no task of its own. Publishes that come before it runs share
        one run, which waits behind every subscriber task they woke; a publish after that
        schedules the next. Outside a running loop nothing is scheduled.
        """
        self._after.append(callback)

    def publish(self, event: SessionEvent) -> None:
        """Queue `event` for every subscriber without waiting for any of them."""
        if self._closed:
            return
        for kinds, tap in self._taps:
            if isinstance(event, kinds):
                try:
                    tap(event)
                except Exception:
                    logger.exception(f"steward event bus: tap {tap!r} failed")
        for sub in self._subs:
            if sub.kinds and not isinstance(event, sub.kinds):
                continue
            try:
                sub.queue.put_nowait(event)
            except asyncio.QueueFull:
                sub.stats.dropped += 1
                continue
            self._ensure_task(sub)
        if self._after:
            self._schedule_after()

    def _schedule_after(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the next event published in one runs them
        if self._after_queued is loop:
            # A subscriber this publish woke is queued behind the run: the run moves back.
            self._after_late = True
            return
        self._after_queued, self._after_late = loop, False
        loop.call_soon(self._run_after, loop)

    def _run_after(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._after_late:
            self._after_late = False
            loop.call_soon(self._run_after, loop)
            return
        self._after_queued = None
        for callback in list(self._after):
            try:
                callback()
            except Exception:
                logger.exception(f"steward event bus: after-publish callback {callback!r} failed")

    async def drain(self, timeout: float = 2.0) -> bool:
        """Wait until every queued event was handled; False if `timeout` passed first."""
        try:
            async with asyncio.timeout(timeout):
                for sub in list(self._subs):
                    await sub.queue.join()
        except TimeoutError:
            return False
        return True

    async def aclose(self, *, drain_timeout: float = 1.0) -> None:
        """Deliver what is queued (bounded by `drain_timeout`), then stop every task."""
        await self.drain(drain_timeout)
        self._closed = True
        for sub in self._subs:
            if sub.task is not None:
                sub.task.cancel()
                await asyncio.gather(sub.task, return_exceptions=True)
                sub.task = None

    def _ensure_task(self, sub: Subscription) -> None:
        if sub.task is not None and not sub.task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the event waits in the queue for the next publish
        sub.task = loop.create_task(_deliver(sub), name=f"steward-events:{sub.name}")


async def _deliver(sub: Subscription) -> None:
    """Feed one subscriber from its queue forever (until cancelled)."""
    while True:
        event = await sub.queue.get()
        try:
            outcome = sub.fn(event)
            if outcome is not None and inspect.isawaitable(outcome):  # sync ones return None
                await outcome
        except Exception:
            sub.stats.errors += 1
            logger.exception(f"steward event subscriber {sub.name!r} failed on {event!r}")
        finally:
            sub.stats.delivered += 1
            sub.queue.task_done()
