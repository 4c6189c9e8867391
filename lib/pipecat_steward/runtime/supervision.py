"""Procedure supervision at run time: the checklist state of one session and its gate calls.

A thin stateful wrapper over the pure ``core.procedures`` functions. The session's variables
are the one blackboard: every procedure write lands there, and every variable change is fed
back so variable-kind steps complete the moment their evidence arrives. ``take`` gives the
client a ``procedure_status`` message whenever its checklist differs from the one it last got.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pipecat_steward.core.procedures import (
    CompiledProcedures,
    GateDecision,
    ProcedureState,
    ProcedureUpdate,
    ProcedureView,
    ToolLogic,
    Verdict,
    Veto,
    apply_verdict,
    decide_tool,
    disarm,
    enter_topic,
    on_tool_result,
    on_variables,
    procedure_status,
    remember_block,
    start_session,
    status_reads,
)
from pipecat_steward.core.sameness import same_value
from pipecat_steward.core.variables import JsonValue

__all__ = ["Supervisor"]

Variables = dict[str, JsonValue]


class Supervisor:
    """The procedure state of one session."""

    def __init__(self, procs: CompiledProcedures, logic: Mapping[str, ToolLogic]) -> None:
        self.procs = procs
        self.logic = logic
        self.state = ProcedureState()
        self._reads = status_reads(procs)
        self._status: tuple[ProcedureState, Variables, dict[str, JsonValue]] | None = None
        self._sent: dict[str, JsonValue] | None = None

    def view(self, variables: Mapping[str, JsonValue]) -> ProcedureView:
        """The procedures and their current state over ``variables``."""
        return ProcedureView(self.procs, self.state, variables)

    def start(self, variables: Mapping[str, JsonValue]) -> Variables:
        """Arm the main scope (host-seeded values win) and return the new variables."""
        return self._apply(start_session(self.procs, variables))

    def sync(
        self, variables: Mapping[str, JsonValue], changed: Iterable[str] | None = None
    ) -> Variables:
        """Re-evaluate variable steps after a blackboard write."""
        return self._apply(on_variables(self.view(variables), changed))

    def enter_topic(self, variables: Mapping[str, JsonValue], topic: str) -> Variables:
        """Arm ``topic``'s procedure, leaving the previous topic (its ungrouped state clears)."""
        if topic not in self.procs.scopes:
            return dict(variables)
        return self._apply(enter_topic(self.view(variables), topic))

    def leave_topic(self, variables: Mapping[str, JsonValue], topic: str) -> Variables:
        """Disarm ``topic`` (return to the main stage); named groups keep their progress."""
        return self._apply(disarm(self.view(variables), topic))

    def gate(self, variables: Mapping[str, JsonValue], tool: str) -> GateDecision:
        """The procedure gate, then the author's ``available_when``; never raises."""
        return decide_tool(self.view(variables), tool, self.logic.get(tool))

    def block(self, veto: Veto) -> None:
        """Remember a vetoed tool so a later result can say it may resume."""
        self.state = remember_block(self.state, veto)

    def tool_result(
        self, variables: Mapping[str, JsonValue], tool: str, result: object, call_id: str | None
    ) -> tuple[Variables, str | None]:
        """Complete tool steps from a result; return the variables and the note to carry."""
        component = result.get("component") if isinstance(result, dict) else None
        done = on_tool_result(
            self.view(variables),
            tool,
            result,
            call_id=call_id,
            component=component if isinstance(component, str) else None,
        )
        return self._apply(done.update), done.note

    def verdict(self, variables: Mapping[str, JsonValue], verdict: Verdict) -> Variables:
        """Apply a judge verdict (the monitor's, or one injected by a test)."""
        return self._apply(apply_verdict(self.view(variables), verdict))

    def status(self, variables: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
        """The ``procedure_status`` payload for the client (shared: do not change it).

        Worked out again only when the procedure state or a variable the payload reads (see
        ``status_reads``) differs from the last time it was asked: the client's message and
        the recorder's events read the same one, and a write to any other variable moves no
        checklist. A payload worked out again to the same value is the last one, the very
        object: its readers tell "nothing new" by identity.
        """
        last = self._status
        read = self._read(variables)
        if last is None or not _same_state(last[0], self.state) or not same_value(last[1], read):
            payload = procedure_status(self.view(variables))
            if last is not None and same_value(payload, last[2]):
                payload = last[2]
            last = self._status = (self.state, read, payload)
        return last[2]

    def _read(self, variables: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
        """What the payload reads of ``variables`` (a name that is not set is left out)."""
        return {name: variables[name] for name in self._reads if name in variables}

    def take(self, variables: Mapping[str, JsonValue]) -> list[dict[str, Any]]:
        """The ``procedure_status`` message the client is owed: the current one, if it is new.

        Whatever moved it (a procedure change or a plain variable write), however often since
        the last take; nothing when the client already has it. The message is the shared
        payload of ``status``: it is sent as it is, never changed.
        """
        status = self.status(variables)
        # The very payload last sent needs no comparison; an equal new one is no news either.
        if status is self._sent or same_value(status, self._sent):
            return []
        self._sent = status
        return [status]

    def _apply(self, update: ProcedureUpdate) -> Variables:
        self.state = update.state
        return dict(update.variables)


def _same_state(a: ProcedureState, b: ProcedureState) -> bool:
    """Whether two procedure states are equal (most often they are the very same one)."""
    return a is b or a == b
