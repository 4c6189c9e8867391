"""Event pre-fill: values that arrive with the call (telephony or CRM data) fill their slots.

Each event-sourced slot takes its value once, typed like the slot (``"6"`` becomes ``6`` for an
integer slot, so conditions compare numbers). After that the caller owns the slot: a
correction, a rejected readback or an invalidation is never undone by the event data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipecat_steward.core.slots.compiled import CompiledFlow
from pipecat_steward.core.variables import JsonValue, VariableSpec, coerce
from pipecat_steward.exceptions import CoercionError

__all__ = ["event_values"]


def event_values(flow: CompiledFlow, event_data: Mapping[str, Any]) -> dict[str, JsonValue]:
    """The event data for each event-sourced slot, coerced to the slot's type.

    Args:
        flow: The compiled flow.
        event_data: The values that came with the call, by event key.

    Returns:
        Slot name to typed value, for the slots whose event key is present (and not null).

    Raises:
        CoercionError: When a value cannot be read as its slot's type; the message names the
            event key, the slot and the expected type.
    """
    values: dict[str, JsonValue] = {}
    for slot in flow.slots:
        if not slot.is_event:
            continue
        key = slot.config.event_key or slot.name
        raw = event_data.get(key)
        if raw is None:
            continue
        kind = slot.config.type
        if kind is None:
            values[slot.name] = raw
            continue
        spec = VariableSpec(name=slot.name, type=kind, values=tuple(slot.config.values))
        try:
            values[slot.name] = coerce(spec, raw)
        except CoercionError as exc:
            raise CoercionError(
                f"event data {key!r} (slot {slot.name!r}): cannot read {raw!r} as {kind}; "
                f"send a {kind} value for {key!r} or remove it from the event data"
            ) from exc
    return values
