"""``EventPublisher``: one session's conversation events, numbered, redacted, fanned out.

``emit`` redacts every string of an event with the session's redaction and stamps its ``t`` and
``turn``; building it (the model, validated, and its JSON text) waits until someone reads it.
An event with a reader as it happens (a sink, a live subscriber, a store) is built at once and
handed to them; otherwise it is built when read (``events``, ``texts``, ``flush``, ``aclose``)
or once ``UNBUILT_MAX`` wait, in one go: a model built on its own between two frames costs
several times what it costs among others, and a call nobody reads builds only in batches. The
event is the same either way (its time, turn, ``seq`` and redaction are those of its ``emit``).
``emit`` never awaits and never raises on a failing sink or store, so it is safe on the frame
path. ``subscribe`` replays the events emitted so far, then yields live ones until the
publisher closes.

Each event is kept as its JSON text, as a store keeps it, and ``events`` parses them when
asked. A call holds its events for as long as it runs, and each full collection of the cycle
collector walks every object that every live call holds. Kept as models (a model, its dict,
its set of fields and every list and dict in it), a call's events would be half the objects
the steward holds, and most of its collector time with many calls at once; text is not walked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from loguru import logger

from pipecat_steward.core.redaction import redact_tree
from pipecat_steward.events.schema import CallEnded, CallStarted, DebugEvent, Event, EventBase
from pipecat_steward.events.store import EventStore, decode, encode
from pipecat_steward.exceptions import ConflictError

__all__ = ["UNBUILT_MAX", "EventPublisher", "Sink", "Watcher"]

Sink = Callable[[Event], None]
"""Told every event synchronously after it is built (keep it quick; it must not raise)."""

Watcher = Callable[[], None]
"""Told synchronously that an event was emitted, before it is built (it must not raise)."""

UNBUILT_MAX = 32
"""Events at most that wait unbuilt (see the module docstring): what they hold is walked by the
cycle collector, their text is not."""

_Unbuilt = tuple[type[EventBase], dict[str, Any], int, float]
"""An event emitted, not built: its kind, redacted fields, turn and time."""

_END: Any = object()  # tells a subscriber the publisher closed


class EventPublisher:
    """The events of one session (see the module docstring).

    Args:
        session: The conversation id every event carries.
        store: Where events are persisted (``None``: kept in memory only).
        redact: A fixed redaction of every string of every event, applied before anyone sees
            it; set ``redaction`` instead to follow secrets that change.
        clock: Monotonic seconds; ``t`` is measured from the publisher's creation.
        first_seq: The ``seq`` of the first event (a resumed call continues its stored events).
        writer: The store claim its events are written under (``EventStore.claim``; an
            ``EventHub`` makes one). Once another worker claims the session, the store refuses
            them: the publisher is then ``fenced`` and stores nothing more, while its live
            subscribers and sinks still get its events.

    Attributes:
        sinks: Told each event as soon as it is built; a publisher with a sink builds every
            event as it is emitted.
        watchers: Told that an event was emitted, before it is built: for a reader that reads
            ``texts`` later (the RTVI sender batches the events of one flush that way).
    """

    def __init__(
        self,
        session: str,
        *,
        store: EventStore | None = None,
        redact: Callable[[str], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        first_seq: int = 1,
        writer: int | None = None,
    ) -> None:
        self.session = session
        self.first_seq = first_seq
        self.store = store
        self.writer = writer
        self.fenced = False
        """True once the store refused this publisher's events: another worker took the call."""
        fixed: Callable[[str], str] = redact or (lambda s: s)
        self.redaction: Callable[[], Callable[[str], str]] = lambda: fixed
        """Gives what redacts the strings of the next event.

        Asked once per event, not once per string: secrets learnt or set between two events
        apply from the next one, and the strings of one event are redacted alike.
        """
        self.clock = clock
        self.turn = 0
        self._kept: list[str] = []  # the JSON text of every event built (see ``events``)
        self._unbuilt: list[_Unbuilt] = []  # emitted after those, in order, not built yet
        self.sinks: list[Sink] = []
        self.watchers: list[Watcher] = []
        self.on_close: list[Callable[[EventPublisher], None]] = []
        """Told once the publisher has closed (an ``EventHub`` forgets it)."""
        self.closed = False
        self._start = clock()
        self._queues: list[asyncio.Queue[Any]] = []
        self._writes: list[Event] = []
        self._writer: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<EventPublisher {self.session!r}: {state}, {self.emitted} emitted>"

    def emit(self, kind: type[EventBase], **fields: Any) -> bool:
        """Redact, stamp and fan out one event of ``kind`` (see the module docstring).

        The fields are redacted now, into a copy: a value the session changes later, or a
        secret it learns later, does not change the event.

        Returns:
            Whether the event was emitted: False once the publisher is closed.
        """
        if self.closed:
            return False
        # Field names are the kind's own (code, never a secret); every value is redacted, keys
        # of nested data included. A session's redactor remembers the strings it has redacted.
        redact = self.redaction()
        clean = {name: redact_tree(value, redact) for name, value in fields.items()}
        t = round(max(0.0, self.clock() - self._start), 6)
        self._unbuilt.append((kind, clean, self.turn, t))
        for watcher in self.watchers:
            try:
                watcher()
            except Exception:
                logger.exception(f"steward event watcher failed on {kind.__name__}")
        if self.sinks or self._queues or self._stores or len(self._unbuilt) >= UNBUILT_MAX:
            self._build()
        return True

    @property
    def _stores(self) -> bool:
        return self.store is not None and not self.fenced

    def _build(self) -> None:
        """Build every event emitted and not built yet, in order, and hand each to its readers."""
        unbuilt, self._unbuilt = self._unbuilt, []
        for kind, clean, turn, t in unbuilt:
            seq = self.first_seq + len(self._kept)
            stamp = {"session": self.session, "seq": seq, "turn": turn, "t": t}
            try:
                event = kind(**clean, **stamp)
            except Exception:
                # A bad field is a bug: it is logged, and a debug event takes the event's place,
                # so every later event keeps the position ``emitted`` gave it (the RTVI sender
                # batches by position) and ``seq`` stays gap-free.
                logger.exception(f"steward events: could not build a {kind.__name__} event")
                event = DebugEvent(tag="event_not_built", data={"kind": kind.__name__}, **stamp)
            self._kept.append(encode(event))  # type: ignore[arg-type]
            for sink in list(self.sinks):
                try:
                    sink(event)  # type: ignore[arg-type]
                except Exception:
                    logger.exception(f"steward event sink failed on {event.kind}")  # type: ignore[attr-defined]
            for queue in self._queues:
                queue.put_nowait(event)
            self._persist(event)  # type: ignore[arg-type]

    @property
    def events(self) -> list[Event]:
        """Every event emitted so far, in order: a new list of new models at each read."""
        self._build()
        return decode(self._kept)

    @property
    def emitted(self) -> int:
        """How many events this publisher has emitted."""
        return len(self._kept) + len(self._unbuilt)

    def texts(self, start: int = 0, end: int | None = None) -> list[str]:
        """The JSON text of the events emitted from the ``start``-th to before the ``end``-th.

        Counted from 0, the first event this publisher emitted; ``end`` None: to the last.
        """
        self._build()
        return self._kept[start:end]

    def start(self, agent: str, channel: str | None = None) -> None:
        """Emit ``call_started`` (the wall-clock start lets stores list sessions newest first)."""
        self.emit(CallStarted, agent=agent, channel=channel, started_at=time.time())

    async def subscribe(self) -> AsyncIterator[Event]:
        """Every event emitted so far, then live ones until ``aclose``."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        seen = self.events
        self._queues.append(queue)
        try:
            for event in seen:
                yield event
            if self.closed:
                return
            while (event := await queue.get()) is not _END:
                if event.seq >= self.first_seq + len(seen):
                    yield event
        finally:
            if queue in self._queues:
                self._queues.remove(queue)

    async def flush(self) -> None:
        """Wait until every event emitted so far is in the store."""
        self._build()
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)
        if self._writes:  # emitted outside a running loop: write them now
            await self._write_all()

    async def aclose(self, status: str = "", reason: str = "") -> None:
        """Emit ``call_ended``, write what is pending and end every subscription."""
        if self.closed:
            return
        self.emit(CallEnded, status=status, reason=reason)
        self._build()
        self.closed = True
        for queue in self._queues:
            queue.put_nowait(_END)
        for told in self.on_close:
            told(self)
        await self.flush()

    def _persist(self, event: Event) -> None:
        if self.store is None or self.fenced:
            return
        self._writes.append(event)
        if self._writer is not None and not self._writer.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: flush() writes it
        self._writer = loop.create_task(self._write_all(), name=f"steward-events:{self.session}")

    async def _write_all(self) -> None:
        assert self.store is not None
        while self._writes:
            batch, self._writes = self._writes, []
            try:
                await self.store.append(batch, self.writer)
            except ConflictError as refused:  # the call is another worker's now: stop storing
                self.fenced, self._writes = True, []
                logger.warning(f"steward events: {refused}; this worker stores no more events")
            except Exception:  # a store outage must not stop the call; the events stay live
                logger.exception(f"steward events: could not store {len(batch)} event(s)")
