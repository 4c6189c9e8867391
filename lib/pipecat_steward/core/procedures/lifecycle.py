"""Arming and disarming checklists as scopes are entered and left.

Arming a scope seeds ``proc_<id>_done`` / ``proc_<id>_na`` (False) for every step of the
checklists it arms and ``proc_current_step``, with setdefault semantics: a value the host
seeded already wins. Evidence already on the blackboard completes variable steps at once.
Leaving a topic clears its own ungrouped ``proc_*`` names and this visit's observations; named
groups keep their progress across hops. The receipts of irreversible results survive every
scope change, so a vetoed repeat names the earlier result in whichever scope it is tried.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pipecat_steward.core.procedures.compiler import MAIN, CompiledProcedures
from pipecat_steward.core.procedures.completion import settle_variables, sync_current
from pipecat_steward.core.procedures.state import (
    CURRENT_STEP,
    ProcedureState,
    ProcedureUpdate,
    ProcedureView,
    Writer,
    armed_checklists,
    current_step,
    done_name,
    na_name,
)
from pipecat_steward.core.variables import JsonValue

__all__ = ["arm", "disarm", "enter_topic", "start_session"]


def start_session(
    procs: CompiledProcedures, variables: Mapping[str, JsonValue], scope: str = MAIN
) -> ProcedureUpdate:
    """Arm the main scope of a new session."""
    return arm(ProcedureView(procs, ProcedureState(), variables), scope)


def arm(view: ProcedureView, scope: str) -> ProcedureUpdate:
    """Activate ``scope`` and seed the state of the checklists it arms (setdefault).

    Args:
        view: The compiled procedures, the current procedure state and the blackboard.
        scope: The scope entered (``main`` or a topic name); unknown scopes arm nothing.
    """
    procs, state = view.procs, view.state
    scopes = state.scopes if scope in state.scopes else (*state.scopes, scope)
    new_state = replace(state, scopes=scopes, visit=state.visit + (scope not in state.scopes))
    writer = Writer.over(view.variables)
    compiled = procs.scopes.get(scope)
    for key in compiled.checklists if compiled else ():
        for step_id in procs.checklists[key].steps:
            writer.setdefault(done_name(step_id), False)
            writer.setdefault(na_name(step_id), False)
    current = _current_id(procs, new_state, writer.variables)
    writer.setdefault(CURRENT_STEP, current)
    settle_variables(procs, new_state, writer, None)
    return writer.update(new_state)


def disarm(view: ProcedureView, scope: str) -> ProcedureUpdate:
    """Leave ``scope`` (return or transfer): clear its ungrouped state; groups keep progress."""
    procs, state = view.procs, view.state
    if scope not in state.scopes:
        return ProcedureUpdate(state, view.variables)
    remaining = tuple(s for s in state.scopes if s != scope)
    new_state = ProcedureState(scopes=remaining, visit=state.visit + 1)
    armed = set(armed_checklists(procs, new_state))
    writer = Writer.over(view.variables)
    own = procs.checklists.get(f"scope:{scope}")
    for step_id in own.steps if own else ():
        writer.delete(done_name(step_id))
        writer.delete(na_name(step_id))
    violations = tuple((k, v) for k, v in state.violations if k in armed)
    new_state = replace(new_state, violations=violations, receipts=state.receipts)
    if armed:
        sync_current(procs, new_state, writer)
    else:
        writer.delete(CURRENT_STEP)
    return writer.update(new_state)


def enter_topic(view: ProcedureView, topic: str) -> ProcedureUpdate:
    """Leave the current topic (if any, never ``main``) and arm ``topic``."""
    update = ProcedureUpdate(view.state, view.variables)
    for scope in view.state.scopes:
        if scope not in (MAIN, topic):
            left = disarm(view.after(update), scope)
            update = ProcedureUpdate(left.state, left.variables, update.changes + left.changes)
    armed = arm(view.after(update), topic)
    return ProcedureUpdate(
        armed.state, armed.variables, update.changes + armed.changes, armed.completed
    )


def _current_id(
    procs: CompiledProcedures, state: ProcedureState, variables: Mapping[str, JsonValue]
) -> str | None:
    step = current_step(procs, state, variables)
    return step.id if step else None
