"""Wire a steward's events: the recorder on the relay, RTVI messages out, logic_slm checks in.

:func:`attach_events` gives a :class:`~pipecat_steward.pipecat.steward.Steward` one
:class:`EventPublisher` (the host's, e.g. from ``EventHub.open``, or its own in-memory one). The
recorder syncs after relay events (scheduled by the relay's bus as it publishes, one sync for
the publishes that come before it runs: no subscriber task and queue of its own), so events
follow the call as it happens; the events of
one flush reach the pipecat client together, as ONE RTVI server message
``{"type": "steward_events", "version": 1, "events": [{...}, ...]}``; and each metered
logic_slm call of the monitor or extractor becomes a ``monitor_check`` event. The publisher
opens with ``call_started``; the host ends it with
``await steward.events.aclose()`` when the pipeline finishes (``call_ended``).
"""

from __future__ import annotations

import functools
import itertools
import json
from typing import TYPE_CHECKING, Any

from loguru import logger

from pipecat_steward.core.costing import UsageEvent
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.recorder import record_session
from pipecat_steward.events.schema import MonitorCheck

if TYPE_CHECKING:
    from pipecat_steward.pipecat.steward import Steward
    from pipecat_steward.storage.ledger import UsageSink

__all__ = ["RTVI_TYPE", "RTVI_VERSION", "StewardEvents", "attach_events"]

RTVI_TYPE = "steward_events"
"""The ``type`` of the RTVI server message that carries the events of one flush."""

RTVI_VERSION = 1
"""The ``version`` of that message's shape (``{"type", "version", "events"}``)."""


class StewardEvents:
    """A steward's publisher and recorder (see the module docstring).

    Attributes:
        publisher: Where the steward's events go.
        recorder: Reads the session into events; ``sync`` / ``end_turn`` on demand.
    """

    def __init__(self, steward: Steward, publisher: EventPublisher) -> None:
        self.steward = steward
        self.publisher = publisher
        self.recorder = record_session(steward.session, publisher, monitor=lambda: steward.monitor)
        self._ids = itertools.count(1)
        # Messages queued in the session's outbox, each with the number of its first event.
        self._batches: list[tuple[dict[str, Any], int]] = []
        # Told never to send (a telephone call): nothing per event. Otherwise the watcher
        # checks per event, since the pipeline may still say no client reads them
        # (``follow_client``).
        if steward.session.sends_client_messages:
            publisher.watchers.append(self._to_client)
            steward.session.before_take.append(self._complete)

    def sync(self, *_: object) -> None:
        """Emit what the session recorded since the last sync."""
        self._meter_checks()
        self.recorder.sync()

    def on_relay(self) -> None:
        """A relay event was handled: sync what the session recorded (a failure is logged)."""
        try:
            self.sync()
        except Exception:
            logger.exception("steward events: the recorder could not sync")

    def end_turn(self, number: int | None = None) -> None:
        """Sync and mark the caller turn as over (``number``: see ``SessionRecorder.end_turn``)."""
        self._meter_checks()
        self.recorder.end_turn(number)

    async def aclose(self, status: str = "", reason: str = "") -> None:
        """Sync a last time and end the publisher."""
        self.sync()
        await self.publisher.aclose(status, reason)

    def _to_client(self) -> None:
        # Into the session's client outbox: the steward sends it with its own client messages,
        # from inside the service's frame handling. Pushed from a task of its own, a message
        # would land between the service's response frames and disturb the client's turn.
        # Every event until the outbox is next taken joins one message: one frame per flush
        # crosses the pipeline and its observers, not one per event. A watcher, not a sink:
        # the events are built when the message is filled, not one at a time as they come.
        session = self.steward.session
        if not session.sends_client_messages:  # nobody reads them: no batch is queued
            self._batches = []
            return
        outbox = session.client_outbox
        queued = self._batches[-1][0] if self._batches else None
        if not outbox or outbox[-1] is not queued:
            batch: dict[str, Any] = {"type": RTVI_TYPE, "version": RTVI_VERSION, "events": []}
            outbox.append(batch)
            self._batches.append((batch, self.publisher.emitted - 1))

    def _complete(self) -> None:
        """Fill the queued messages with their events as the outbox is taken.

        Their JSON text is the publisher's, parsed in one go per message: one parse per flush
        instead of a second serialisation of every event.
        """
        batches, self._batches = self._batches, []
        if not batches:
            return
        ends = [start for _, start in batches[1:]] + [self.publisher.emitted]
        for (batch, start), end in zip(batches, ends, strict=True):
            batch["events"] = json.loads(f"[{','.join(self.publisher.texts(start, end))}]")

    def _meter_checks(self) -> None:
        """Tee the logic_slm client's ledger once a monitor or extractor is attached."""
        for part in (self.steward.monitor, self.steward.extractor):
            client = getattr(part, "client", None)
            if client is None:
                continue
            if not isinstance(client.ledger, _CheckTee):
                client.ledger = _CheckTee(client.ledger)
            client.ledger.add(self, _identity(getattr(part, "stage", None)))

    def check(self, event: UsageEvent) -> None:
        """Emit one metered logic_slm call as a ``monitor_check`` event."""
        self.publisher.emit(
            MonitorCheck,
            request_id=f"{event.scope}-{next(self._ids)}",
            purpose="monitor" if event.scope == "adherence" else "extractor",
            latency_ms=event.latency_ms,
            verdict=event.outcome,
            cost_usd=_cost(event),
            model=f"{event.provider}/{event.model}",
        )


Identity = tuple[str, str, str]


class _CheckTee:
    """A usage sink that records each row and tells the steward whose call it was.

    A client shared by several calls tells only the steward whose logic_slm stage identity the
    row carries (and nobody when that identity is ambiguous): one call never sees another's.
    """

    def __init__(self, inner: UsageSink) -> None:
        self.inner = inner
        self.targets: dict[int, tuple[StewardEvents, set[Identity]]] = {}

    def add(self, events: StewardEvents, identity: Identity | None) -> None:
        _, identities = self.targets.setdefault(id(events), (events, set()))
        if identity is not None:
            identities.add(identity)

    def record(self, event: UsageEvent) -> None:
        self.inner.record(event)
        targets = [t for t, _ in self.targets.values()]
        if len(targets) > 1:
            row = (event.tenant_id, event.agent_id, event.session_id)
            targets = [t for t, ids in self.targets.values() if row in ids]
        if len(targets) == 1:
            targets[0].check(event)


def _identity(stage: Any) -> Identity | None:
    identity = getattr(stage, "identity", None)
    if identity is None:
        return None
    return (identity.tenant_id, identity.agent_id, identity.session_id)


def _session_id(steward: Steward) -> str:
    checkpointer = steward.session.checkpointer
    return checkpointer.identity.session_id if checkpointer is not None else "local"


@functools.cache
def _prices() -> Any:
    from pipecat_steward.slm.manifests import load_price_book

    return load_price_book()


def _cost(event: UsageEvent) -> float | None:
    try:
        from pipecat_steward.core.costing import event_cost

        cost = event_cost(_prices(), event)
    except Exception:  # an unreadable price book leaves the check unpriced
        return None
    return None if cost is None else float(cost)


def attach_events(steward: Steward, publisher: EventPublisher | None = None) -> StewardEvents:
    """Give ``steward`` an event publisher fed by its relay and session (see module docstring)."""
    if publisher is None:
        publisher = EventPublisher(_session_id(steward))
    events = StewardEvents(steward, publisher)
    publisher.start(steward.agent.name, steward.session.channel)
    steward.relay.bus.after_publish(events.on_relay)
    return events
