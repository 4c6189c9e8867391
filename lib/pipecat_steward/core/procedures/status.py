"""The ``procedure_status`` payload: the live checklist the client and the trace show."""

from __future__ import annotations

from pipecat_steward.core.procedures.compiler import CompiledProcedures
from pipecat_steward.core.procedures.state import (
    ProcedureView,
    ProcedureViolation,
    applies_reads,
    armed_checklists,
    done_name,
    na_name,
    step_state,
)
from pipecat_steward.core.variables import JsonValue

__all__ = ["procedure_status", "status_reads"]


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


def status_reads(procs: CompiledProcedures) -> tuple[str, ...]:
    """Every variable :func:`procedure_status` reads, sorted: its payload depends on no other.

    Each step's done and not-applicable flags, the names its applicability conditions read and
    those of each checklist's own condition. A write to any other variable cannot move a
    checklist, so whoever keeps the payload need not work it out again for one.
    """
    names: set[str] = set()
    for step in procs.steps.values():
        names.update((done_name(step.id), na_name(step.id)), applies_reads(step))
    for checklist in procs.checklists.values():
        for condition in checklist.condition:
            names.update(condition.names)
    return tuple(sorted(names))
