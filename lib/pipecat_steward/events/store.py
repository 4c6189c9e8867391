"""Event stores: every session's events, in order, and the list of sessions newest first.

Backends: :class:`MemoryEventStore` (tests), ``SQLiteEventStore`` (the embedded default) and
``RedisEventStore`` (a Redis stream per session). Open one from a store spec with
``open_event_store`` (the same specs as the checkpoint store's ``--store``).

Several workers can write one session (a worker resumes a call another one lost): the one that
takes it over ``claim``s the session and numbers its events after every stored one. From then
on a write of an earlier claim is refused with ``ConflictError``, so a stale worker still
emitting can neither number events like the new one's nor write between them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pipecat_steward.events.schema import CallStarted, Event, parse_event_or_none
from pipecat_steward.exceptions import ConflictError
from pipecat_steward.storage.spec import parse_store_spec

__all__ = [
    "EventStore",
    "MemoryEventStore",
    "SessionSummary",
    "WriterClaim",
    "check_writer",
    "decode",
    "encode",
    "open_event_store",
    "summarise",
]


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One stored session, as a list of past calls shows it.

    Attributes:
        session: The conversation id.
        agent: The agent's name (empty when its ``call_started`` event is missing).
        started_at: Wall-clock start in epoch seconds (0 when unknown).
        events: How many events are stored.
        last_t: ``t`` of the latest event (the call's length so far, in seconds).
    """

    session: str
    agent: str
    started_at: float
    events: int
    last_t: float


@dataclass(frozen=True, slots=True)
class WriterClaim:
    """A session's events, claimed by one writer (see the module docstring).

    Attributes:
        writer: The claim's number; the session's later claims have larger ones.
        next_seq: The ``seq`` after every event stored when the claim was made.
    """

    writer: int
    next_seq: int


class EventStore(Protocol):
    """Persistence of conversation events (append-only per session)."""

    async def claim(self, session: str) -> WriterClaim:
        """Make the next writer of ``session`` its only writer (earlier claims are refused)."""
        ...

    async def append(self, events: Sequence[Event], writer: int | None = None) -> None:
        """Store ``events`` (already redacted, in ``seq`` order) after the session's others.

        Args:
            events: Events of one session.
            writer: The claim they are written under; None writes without one.

        Raises:
            ConflictError: When ``writer`` is not the session's latest claim (nothing stored).
        """
        ...

    async def read(self, session: str, after: int = 0) -> list[Event]:
        """The session's events with ``seq > after``, in order (empty for an unknown one)."""
        ...

    async def sessions(self, limit: int = 100) -> list[SessionSummary]:
        """Stored sessions, newest start first."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


def encode(event: Event) -> str:
    """The stored JSON text of an event."""
    return event.model_dump_json()


def decode(texts: Sequence[str | bytes]) -> list[Event]:
    """Events from stored JSON texts; kinds this reader does not know are skipped."""
    return [e for e in (parse_event_or_none(t) for t in texts) if e is not None]


def summarise(session: str, events: Sequence[Event]) -> SessionSummary:
    """The summary of a session from its events."""
    started = next((e for e in events if isinstance(e, CallStarted)), None)
    return SessionSummary(
        session=session,
        agent=started.agent if started else "",
        started_at=started.started_at if started else 0.0,
        events=len(events),
        last_t=events[-1].t if events else 0.0,
    )


class MemoryEventStore:
    """Events in a dict (tests, and ``memory:`` stores)."""

    def __init__(self) -> None:
        self._events: dict[str, list[str]] = {}
        self._writers: dict[str, int] = {}

    async def claim(self, session: str) -> WriterClaim:
        writer = self._writers[session] = self._writers.get(session, 0) + 1
        texts = self._events.get(session, [])
        return WriterClaim(writer, max((json.loads(t)["seq"] for t in texts), default=0) + 1)

    async def append(self, events: Sequence[Event], writer: int | None = None) -> None:
        for session in {event.session for event in events}:
            check_writer(session, writer, self._writers.get(session, 0))
        for event in events:
            self._events.setdefault(event.session, []).append(encode(event))

    async def read(self, session: str, after: int = 0) -> list[Event]:
        return [e for e in decode(self._events.get(session, [])) if e.seq > after]

    async def sessions(self, limit: int = 100) -> list[SessionSummary]:
        found = [summarise(s, decode(texts)) for s, texts in self._events.items()]
        return sorted(found, key=lambda s: s.started_at, reverse=True)[:limit]

    async def close(self) -> None:
        return None


def check_writer(session: str, writer: int | None, latest: int) -> None:
    """Refuse a write under a claim that is not ``session``'s latest one.

    Raises:
        ConflictError: Naming both claims.
    """
    if writer is not None and writer != latest:
        raise ConflictError(
            f"events of session {session!r} are written by claim {latest} now, not {writer}: "
            "another worker took the call over"
        )


def open_event_store(spec: str) -> EventStore:
    """The event store ``spec`` names: ``memory:``, ``sqlite:PATH`` or ``redis://…``.

    Raises:
        StoreError: When the spec names no known backend (the message lists the forms), or
            its database cannot be opened.
    """
    kind, target = parse_store_spec(spec, "event")
    if kind == "memory":
        return MemoryEventStore()
    if kind == "sqlite":
        from pipecat_steward.events.sqlite_store import SQLiteEventStore

        return SQLiteEventStore(target)
    from pipecat_steward.events.redis_store import RedisEventStore

    return RedisEventStore(target)
