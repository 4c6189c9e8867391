"""The ``procedure_status`` payload: the live checklist the client and the trace show."""

from __future__ import annotations

from pipecat_steward.core.procedures.state import (
    ProcedureView,
    ProcedureViolation,
    armed_checklists,
    step_state,
)
from pipecat_steward.core.variables import JsonValue

__all__ = ["procedure_status"]


def _violation(v: ProcedureViolation | None) -> JsonValue:
    return None if v is None else {"kind": v.kind, "step": v.step, "detail": v.detail}


def procedure_status(view: ProcedureView) -> dict[str, JsonValue]:
    """Every checklist with each step's state, ``active_in`` scopes and the last violation.

    Returns:
        ``{"type": "procedure_status", "current_step": id | None, "scopes": [...],
        "procedures": [{"key", "title", "group", "armed", "active_in", "last_violation",
        "steps": [{"id", "title", "state", "current", "kind", "irreversible", "active_in"}]}]}``
    """
    procs, state, variables = view.procs, view.state, view.variables
    armed = set(armed_checklists(procs, state))
    current = view.current()
    procedures: list[JsonValue] = []
    for key, checklist in procs.checklists.items():
        steps: list[JsonValue] = [
            {
                "id": s.id,
                "title": s.title,
                "state": step_state(s, variables),
                "current": current is not None and s.id == current.id,
                "kind": s.kind,
                "irreversible": s.irreversible,
                "active_in": list(checklist.active_in),
            }
            for s in procs.checklist_steps(key)
        ]
        procedures.append(
            {
                "key": key,
                "title": checklist.title,
                "group": checklist.group,
                "armed": key in armed,
                "active_in": list(checklist.active_in),
                "last_violation": _violation(state.last_violation(key)),
                "steps": steps,
            }
        )
    return {
        "type": "procedure_status",
        "current_step": current.id if current else None,
        "scopes": list(state.scopes),
        "procedures": procedures,
    }
