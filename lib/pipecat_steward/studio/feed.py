"""Per-session event feeds: every event kept in order, fanned out to live subscribers.

A page that connects late gets the backlog first, then live events, so opening the studio in
the middle of a call shows the whole call. Events are plain JSON-ready dicts; each gets a
``seq`` (its position in the session) when published.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

__all__ = ["Feed", "Feeds"]

Event = dict[str, Any]


class Feed:
    """The events of one session, in order, with live subscribers."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.events: list[Event] = []
        self._queues: set[asyncio.Queue[Event | None]] = set()

    def publish(self, event: Mapping[str, Any]) -> Event:
        """Append ``event`` (numbered) and hand it to every subscriber."""
        numbered = {**event, "seq": len(self.events) + 1}
        self.events.append(numbered)
        for queue in self._queues:
            queue.put_nowait(numbered)
        return numbered

    def extend(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Publish several events in order."""
        for event in events:
            self.publish(event)

    def close(self) -> None:
        """End every subscription (the call is over)."""
        for queue in self._queues:
            queue.put_nowait(None)

    async def subscribe(self) -> AsyncIterator[Event]:
        """The backlog, then live events until the feed closes."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        backlog = list(self.events)
        self._queues.add(queue)
        try:
            for event in backlog:
                yield event
            while (event := await queue.get()) is not None:
                yield event
        finally:
            self._queues.discard(queue)


class Feeds:
    """The feeds of the sessions this studio serves, by session id."""

    def __init__(self) -> None:
        self._feeds: dict[str, Feed] = {}

    def get(self, session: str) -> Feed:
        """The feed of ``session`` (created empty on first use)."""
        feed = self._feeds.get(session)
        if feed is None:
            feed = self._feeds[session] = Feed(session)
        return feed

    def known(self) -> list[str]:
        """Session ids with a feed, oldest first."""
        return list(self._feeds)
