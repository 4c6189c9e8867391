"""A background listener on the steward's relay bus that holds one seat on the steward.

The procedure monitor and the entity extractor are both such listeners: a steward has at most
one of each (``steward.monitor``, ``steward.extractor``), attaching another replaces the one
before, ``STEWARD_MONITOR_ENABLED=0`` keeps them off the bus, and detaching one also drops the
``attach_supervision`` record that holds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal, Self

from loguru import logger

from pipecat_steward.pipecat.events import SessionEvent, Subscription
from pipecat_steward.pipecat.redaction import install_log_redaction
from pipecat_steward.pipecat.switch import monitor_enabled

if TYPE_CHECKING:
    from pipecat_steward.pipecat.steward import Steward

__all__ = ["SeatedListener"]


class SeatedListener:
    """Subscribe to the relay bus and take a seat on the steward (subclass sets the names).

    Class attributes a subclass sets:
        seat: The steward attribute (and ``Supervision`` field) that holds the listener.
        label: What the logs call it; with dashes, the bus subscription's name.
        reads: The relay event kinds it handles; the bus wakes it for these only (empty:
            every event).
    """

    seat: ClassVar[Literal["monitor", "extractor"]]
    label: ClassVar[str]
    reads: ClassVar[tuple[type[SessionEvent], ...]] = ()
    steward: Steward
    _sub: Subscription | None

    async def on_event(self, event: SessionEvent) -> None:
        """Handle one relay event (a subclass overrides it)."""
        raise NotImplementedError

    def start(self) -> Self:
        """Take the seat: detach the listener seated before, then subscribe to the relay bus.

        With ``STEWARD_MONITOR_ENABLED=0`` nothing is subscribed and the seat stays empty.
        """
        previous = getattr(self.steward, self.seat)
        if previous is not None and previous is not self:
            previous.detach()
        setattr(self.steward, self.seat, None)
        if not monitor_enabled():
            logger.info(f"{self.label} disabled by STEWARD_MONITOR_ENABLED=0")
            return self
        install_log_redaction()
        self._sub = self.steward.relay.bus.subscribe(
            self.on_event, name=self.label.replace(" ", "-"), kinds=self.reads
        )
        self._plug()
        setattr(self.steward, self.seat, self)
        return self

    def detach(self) -> None:
        """Leave: unsubscribe, stop the background work and give up the seat."""
        if self._sub is not None:
            self.steward.relay.bus.unsubscribe(self._sub)
            self._sub = None
        self._unplug()
        if getattr(self.steward, self.seat) is self:
            setattr(self.steward, self.seat, None)
        held = self.steward.supervision
        if held is not None and getattr(held, self.seat) is self:
            self.steward.supervision = None  # what attach_supervision attached is gone

    def _plug(self) -> None:
        """Once subscribed: connect what else the listener serves (nothing by default)."""

    def _unplug(self) -> None:
        """On detach: disconnect and cancel the listener's background work."""
