"""Which steward-managed tools the LLM may see right now.

Executors are never visible: tasks fire from the engine. Setters are visible while one of their
slots can take a value; ``confirm_pending``/``reject_pending`` only during a readback that was
already read out (fresh pending values hide them until read back); ``correct_slot`` while
something is settled and ``decline_slot`` while something can still be asked.
"""

from __future__ import annotations

from pipecat_steward.core.slots.compiled import CompiledFlow
from pipecat_steward.core.slots.dag import requires_met
from pipecat_steward.core.state import EMPTY, SessionState

__all__ = ["visible_tools"]

_CORRECTABLE = frozenset({"filled", "inferred", "deferred"})


def visible_tools(flow: CompiledFlow, state: SessionState, fresh_pending: bool) -> frozenset[str]:
    """Return the steward-managed tool names the LLM may call now.

    One pass over the caller slots decides every setter and steward tool.

    Args:
        flow: The compiled flow.
        state: The state after this invocation's routing.
        fresh_pending: Pending values appeared since the last invocation (not yet read back).
    """
    if state.status != "in_progress":
        return frozenset()
    visible: set[str] = set()
    pending = correctable = open_ = False
    slots, variables = state.slots, state.variables
    for name, setter, condition, requires in flow.user_rows:
        status = slots.get(name, EMPTY).status
        if status == "pending":
            pending = True
            if not fresh_pending:
                visible.add(setter)
            continue
        if not correctable and status in _CORRECTABLE:
            correctable = True
        # The slot needs a value: open, active, and its prerequisites settled.
        if (
            (status == "empty" or status == "inferred")
            and (condition is None or condition.truthy(variables))
            and (not requires or requires_met(flow, slots, requires))
        ):
            open_ = True
            visible.add(setter)
    if pending and not fresh_pending:
        visible |= {"confirm_pending", "reject_pending"}
    if correctable:
        visible.add("correct_slot")
    if open_:
        visible.add("decline_slot")
    return frozenset(visible)
