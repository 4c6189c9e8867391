"""Which steward-managed tools the LLM may see right now (seed 000 §4).

Executors are never visible: tasks fire from the engine. Setters are visible while one of their
slots can take a value; ``confirm_pending``/``reject_pending`` only during a readback that was
already read out (§4.3 fresh pending); ``correct_slot`` while something is settled and
``decline_slot`` while something can still be asked.
"""

from __future__ import annotations

from pipecat_steward.core.slots.compiled import CompiledFlow, CompiledSlot
from pipecat_steward.core.slots.dag import is_active
from pipecat_steward.core.state import SessionState

__all__ = ["visible_tools"]

_CORRECTABLE = frozenset({"filled", "inferred", "deferred"})


def visible_tools(flow: CompiledFlow, state: SessionState, fresh_pending: bool) -> frozenset[str]:
    """Return the steward-managed tool names the LLM may call now.

    Args:
        flow: The compiled flow.
        state: The state after this invocation's routing.
        fresh_pending: Pending values appeared since the last invocation (§4.3).
    """
    if state.status != "in_progress":
        return frozenset()
    pending = any(r.status == "pending" for r in state.slots.values())
    visible: set[str] = set()
    for setter, members in flow.setters.items():
        if any(_setter_open(flow.slot[s], state, fresh_pending) for _, s in members):
            visible.add(setter)
    if pending and not fresh_pending:
        visible |= {"confirm_pending", "reject_pending"}
    if any(state.record(n).status in _CORRECTABLE for n in flow.user_slots):
        visible.add("correct_slot")
    if any(_needs_value(flow.slot[n], state) for n in flow.user_slots):
        visible.add("decline_slot")
    return frozenset(visible)


def _needs_value(slot: CompiledSlot, state: SessionState) -> bool:
    record = state.record(slot.name)
    if record.status not in ("empty", "inferred") or not is_active(slot, state):
        return False
    return all(state.record(r).settled for r in slot.config.requires)


def _setter_open(slot: CompiledSlot, state: SessionState, fresh_pending: bool) -> bool:
    if not slot.is_user:
        return False
    if state.record(slot.name).status == "pending":
        return not fresh_pending  # inline correction, but not before the readback is heard
    return _needs_value(slot, state)
