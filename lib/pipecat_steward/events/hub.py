"""``EventHub``: the live publishers of one process over one event store.

A host opens a publisher per call with :meth:`EventHub.open`; the studio (or any reader) calls
:meth:`EventHub.subscribe` with a session id and gets the stored events first, then the live
ones while the call runs. A session that is not live replays its stored events and ends.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.schema import Event
from pipecat_steward.events.store import EventStore, MemoryEventStore, SessionSummary

__all__ = ["EventHub"]


class EventHub:
    """Live publishers by session id, persisting into ``store``.

    Args:
        store: Where every publisher writes (default: a memory store).
    """

    def __init__(self, store: EventStore | None = None) -> None:
        self.store: EventStore = store if store is not None else MemoryEventStore()
        self.live: dict[str, EventPublisher] = {}

    async def open(
        self,
        session: str,
        *,
        redact: Callable[[str], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> EventPublisher:
        """A publisher for ``session``; a session already stored continues its ``seq``."""
        stored = await self.store.read(session)
        first = stored[-1].seq + 1 if stored else 1
        publisher = EventPublisher(
            session, store=self.store, redact=redact, clock=clock, first_seq=first
        )
        self.live[session] = publisher
        return publisher

    async def close(self, session: str, status: str = "", reason: str = "") -> None:
        """End ``session``'s publisher (emits ``call_ended``, writes what is pending)."""
        publisher = self.live.pop(session, None)
        if publisher is not None:
            await publisher.aclose(status, reason)

    async def subscribe(self, session: str) -> AsyncIterator[Event]:
        """Stored events of ``session`` in order, then live ones until the call ends."""
        publisher = self.live.get(session)
        if publisher is None:
            for event in await self.store.read(session):
                yield event
            return
        for event in await self.store.read(session):
            if event.seq < publisher.first_seq:
                yield event
        async for event in publisher.subscribe():
            yield event

    async def sessions(self, limit: int = 100) -> list[SessionSummary]:
        """Stored sessions, newest first."""
        return await self.store.sessions(limit)
