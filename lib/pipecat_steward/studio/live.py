"""The agent's variables on the slot board of a live call.

Every steward publishes its own events (``pipecat_steward.events``): turns, calls, gates, flow
slots, the checklist, corrections and logic_slm checks. The variables the extractor fills or
the platform sets (a caller's date of birth, a verification status) are not flow slots, so
``VariableWatch`` publishes their changes as ``slot_change`` events too, with ``source``
``extractor`` or ``platform``. Sensitive values never leave: they are shown as ``•••``.
"""

from __future__ import annotations

from typing import Any

from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.schema import SlotChange

__all__ = ["HIDDEN", "VariableWatch"]

HIDDEN = "•••"


class VariableWatch:
    """Emits a ``slot_change`` whenever one of the agent's variables changes value."""

    def __init__(self, steward: Any, publisher: EventPublisher) -> None:
        self.steward = steward
        self.publisher = publisher
        slots = {slot.config.name for slot in steward.agent.flow.slots}
        self._specs = [v for v in steward.agent.variables if v.name not in slots]
        self._seen: dict[str, Any] = {}

    def sync(self, *_: object) -> None:
        """Publish the variables whose value changed since the last sync."""
        values = self.steward.session.state.variables
        for spec in self._specs:
            value = values.get(spec.name)
            if value is None and spec.name not in self._seen:
                continue
            if spec.name in self._seen and self._seen[spec.name] == value:
                continue
            before = self._seen.get(spec.name, None)
            self._seen[spec.name] = value
            self.publisher.emit(
                SlotChange,
                slot=spec.name,
                status="empty" if value is None else "filled",
                value=HIDDEN if spec.sensitive and value is not None else value,
                source="platform" if spec.linked else "extractor" if spec.extraction else None,
                previous_status=None if before is None else "filled",
            )

    def attach(self) -> VariableWatch:
        """Sync on every relay event of the steward (the extractor writes between them)."""
        self.steward.relay.bus.subscribe(self.sync, name="steward-studio-variables")
        return self
