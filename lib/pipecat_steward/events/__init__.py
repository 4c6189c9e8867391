"""Conversation events: the typed, versioned record of a call (see ``docs/events.md``).

``schema`` defines the events; ``EventPublisher`` numbers, redacts and fans them out for one
session; ``EventHub`` keeps the live publishers over an ``EventStore`` (memory, SQLite, Redis).
"""

from pipecat_steward.events.hub import EventHub
from pipecat_steward.events.publisher import EventPublisher, Sink
from pipecat_steward.events.schema import SCHEMA_VERSION, Event, parse_event
from pipecat_steward.events.store import EventStore, MemoryEventStore, SessionSummary

__all__ = [
    "SCHEMA_VERSION",
    "Event",
    "EventHub",
    "EventPublisher",
    "EventStore",
    "MemoryEventStore",
    "SessionSummary",
    "Sink",
    "parse_event",
]
