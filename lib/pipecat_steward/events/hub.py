"""``EventHub``: the live publishers of one process over one event store.

A host opens a publisher per call with :meth:`EventHub.open`; the studio (or any reader) calls
:meth:`EventHub.subscribe` with a session id and gets the stored events first, then the live
ones while the call runs. A session that is not live replays its stored events and ends.

A session has one live publisher: opening it again (a caller who reconnects to the same
session) ends the previous one first, with ``call_ended`` status ``replaced``, and the new one
numbers its events after every event the previous one wrote. Two publishers at once would
number their events alike, and a store keeps one event per number: one would overwrite the
other. A publisher that closes, by the hub or by its own ``aclose``, stops being live.

Across processes the store does the same: each ``open`` claims the session in the store
(``EventStore.claim``), and a publisher of another process that opened it before (a worker
that lost the call, still running) has its writes refused from then on (it is ``fenced``).
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
        """A publisher for ``session``; a session already stored continues its ``seq``.

        A publisher still live for ``session`` is closed first, and any other one, in any
        process, stops storing (see the module docstring).
        """
        previous = self.live.get(session)
        if previous is not None:
            await previous.aclose("replaced", "the session was opened again")
        claim = await self.store.claim(session)
        publisher = EventPublisher(
            session,
            store=self.store,
            redact=redact,
            clock=clock,
            first_seq=claim.next_seq,
            writer=claim.writer,
        )
        self.live[session] = publisher
        publisher.on_close.append(self._forget)
        return publisher

    def _forget(self, publisher: EventPublisher) -> None:
        if self.live.get(publisher.session) is publisher:
            del self.live[publisher.session]

    async def close(self, session: str, status: str = "", reason: str = "") -> None:
        """End ``session``'s live publisher (emits ``call_ended``, writes what is pending)."""
        publisher = self.live.get(session)
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
