"""Where the studio finds sessions: the event store (live calls write there too) and trace files.

``SessionSource`` answers the page's three questions over an ``EventHub``: which sessions are
there (newest first), what are one session's events, and what happens next in it (stored
events, then live ones while the call runs). A trace file is read once into the hub's store
as a session of its own, so it replays like a recorded call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pipecat_steward.events.hub import EventHub
from pipecat_steward.studio.trace_events import TraceReader
from pipecat_steward.studio.trace_format import read_traces

__all__ = ["SessionSource"]

Event = dict[str, Any]
_TRACE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".txt", ".trace")


class SessionSource:
    """Sessions of one event hub, as the page asks for them."""

    def __init__(self, hub: EventHub, agent: str, titles: dict[str, str]) -> None:
        self.hub = hub
        self.agent = agent
        self.titles = titles

    async def resolve(self, replay: str) -> str:
        """The session id of ``replay``: a trace file (read into the store now) or a session id."""
        path = Path(replay)
        if not (path.suffix in _TRACE_SUFFIXES or path.is_file()):
            return replay
        session = f"trace-{path.stem}"
        if await self.hub.store.read(session):
            return session
        publisher = await self.hub.open(session)
        publisher.start(self.agent, "trace")
        reader = TraceReader(publisher, self.titles)
        for trace in read_traces(path):
            reader.read(trace)
        await self.hub.close(session, status="replayed", reason=f"trace file {path.name}")
        return session

    async def sessions(self) -> list[dict[str, Any]]:
        """Every stored session, newest first, marked live while its call runs."""
        return [
            {
                "id": s.session,
                "agent": s.agent,
                "started_at": s.started_at,
                "events": s.events,
                "seconds": s.last_t,
                "live": s.session in self.hub.live,
            }
            for s in await self.hub.sessions()
        ]

    async def events(self, session: str) -> list[Event]:
        """The events of ``session`` so far (stored and live), as JSON objects."""
        return [e.model_dump(mode="json") async for e in self._so_far(session)]

    async def _so_far(self, session: str) -> AsyncIterator[Any]:
        publisher = self.hub.live.get(session)
        if publisher is None:
            for event in await self.hub.store.read(session):
                yield event
            return
        for event in await self.hub.store.read(session):
            if event.seq < publisher.first_seq:
                yield event
        for event in list(publisher.events):
            yield event

    async def subscribe(self, session: str) -> AsyncIterator[Event]:
        """The events of ``session``: what happened so far, then live ones while it runs."""
        async for event in self.hub.subscribe(session):
            yield event.model_dump(mode="json")
