"""Where the studio finds sessions: live calls in this process, trace files, the event store.

``SessionSource`` answers the page's three questions (which sessions are there, newest
first; what are one session's events; what happens next in it) over every place a session
can come from.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipecat_steward.studio.feed import Feeds
from pipecat_steward.studio.trace_events import read_trace_file

if TYPE_CHECKING:
    from pipecat_steward.studio.app import StudioConfig

__all__ = ["SessionSource", "sources_for"]

Event = dict[str, Any]


class SessionSource:
    """Sessions from live feeds and loaded trace files."""

    def __init__(self, feeds: Feeds) -> None:
        self.feeds = feeds
        self._finished: set[str] = set()

    def resolve(self, replay: str) -> str:
        """The session id of ``replay``: a trace file (loaded now) or a session id."""
        path = Path(replay)
        if path.suffix in (".json", ".jsonl", ".ndjson", ".txt") or path.is_file():
            session = f"trace:{path.stem}"
            feed = self.feeds.get(session)
            if not feed.events:
                feed.extend(read_trace_file(path))
            self._finished.add(session)
            return session
        return replay

    def sessions(self) -> list[dict[str, Any]]:
        """Every session, newest first."""
        out = [
            {"id": s, "events": len(self.feeds.get(s).events), "live": s not in self._finished}
            for s in self.feeds.known()
        ]
        return out[::-1]

    def events(self, session: str) -> list[Event] | None:
        """The events of ``session`` so far (None when unknown)."""
        if session not in self.feeds.known():
            return None
        return list(self.feeds.get(session).events)

    async def subscribe(self, session: str) -> AsyncIterator[Event]:
        """The events of ``session``: what happened so far, then live ones while it runs."""
        if session in self._finished:
            for event in self.feeds.get(session).events:
                yield event
            return
        async for event in self.feeds.get(session).subscribe():
            yield event


def sources_for(config: StudioConfig, feeds: Feeds) -> SessionSource:
    """The session source of a studio configuration."""
    return SessionSource(feeds)
