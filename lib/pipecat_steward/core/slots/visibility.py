"""Which steward-managed tools the LLM may see right now (seed 000 §4).

Executors are never visible: tasks fire from the engine. Setters are visible while one of their
slots can take a value; ``confirm_pending``/``reject_pending`` only during a readback that was
already read out (§4.3 fresh pending); ``correct_slot`` while something is settled and
``decline_slot`` while something can still be asked.
"""

from __future__ import annotations

from pipecat_steward.core.slots.compiled import CompiledFlow, CompiledSlot
from pipecat_steward.core.slots.dag import is_active
from pipecat_steward.core.state import EMPTY, SessionState

__all__ = ["visible_tools"]

_CORRECTABLE = frozenset({"filled", "inferred", "deferred"})


def visible_tools(flow: CompiledFlow, state: SessionState, fresh_pending: bool) -> frozenset[str]:
    """Return the steward-managed tool names the LLM may call now.

    One pass over the caller slots decides every setter and steward tool.

    Args:
        flow: The compiled flow.
        state: The state after this invocation's routing.
        fresh_pending: Pending values appeared since the last invocation (§4.3).
    """
    if state.status != "in_progress":
        return frozenset()
    visible: set[str] = set()
    pending = correctable = open_ = False
    slots = state.slots
    for name in flow.user_slots:
        slot = flow.slot[name]
        status = slots.get(name, EMPTY).status
        if status == "pending":
            pending = True
            if not fresh_pending:
                visible.add(slot.config.setter or "")
            continue
        correctable = correctable or status in _CORRECTABLE
        if _needs_value(slot, state, status):
            open_ = True
            visible.add(slot.config.setter or "")
    if pending and not fresh_pending:
        visible |= {"confirm_pending", "reject_pending"}
    if correctable:
        visible.add("correct_slot")
    if open_:
        visible.add("decline_slot")
    return frozenset(visible)


def _needs_value(slot: CompiledSlot, state: SessionState, status: str) -> bool:
    if status not in ("empty", "inferred") or not is_active(slot, state):
        return False
    return all(state.record(r).settled for r in slot.config.requires)
