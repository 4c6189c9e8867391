"""Turn traces (one caller turn each, as ``steward simulate --json`` prints them) into events.

A trace holds one turn's outcome; the studio wants what happened, in order, in the
conversation event schema (``pipecat_steward.events``). ``TraceReader`` remembers the previous
turn so it emits only what changed: a slot whose status, value or source moved, the checklist
when a step's state moved. It emits through an ``EventPublisher``, so the events are numbered,
redacted, persisted in the studio's store and fanned out like any live call's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.schema import (
    BotUtteranceEvent,
    CallerTranscript,
    ChecklistStatus,
    CorrectionEvent,
    EngineDecision,
    GateDecision,
    MonitorCheck,
    SlotChange,
    ToolCallEvent,
    ToolResultEvent,
    TransactionEvent,
)

__all__ = ["TraceReader"]

_OUTCOMES = {"ok": "ok", "refused": "refused", "vetoed": "vetoed", "veto": "vetoed"}
_SLOT_KEYS = ("status", "value", "source")


class TraceReader:
    """Emits the events each turn trace adds, in the order they happened within the turn."""

    def __init__(self, publisher: EventPublisher, step_titles: Mapping[str, str] | None = None):
        self.publisher = publisher
        self.titles = dict(step_titles or {})
        self._slots: dict[str, Mapping[str, Any]] = {}
        self._steps: dict[str, str] = {}
        self._violation: Any = None

    def read(self, trace: Mapping[str, Any], *, source: str = "cascade") -> None:
        """Emit the events of one turn trace."""
        emit = self.publisher.emit
        self.publisher.turn = int(trace.get("turn", 0))
        if trace.get("user"):
            emit(CallerTranscript, text=trace["user"], source=source)
        emit(
            EngineDecision,
            phase=trace.get("phase") or "collection",
            status=trace.get("status") or "in_progress",
            visible_tools=list(trace.get("visible_tools") or []),
            asks=list(trace.get("asks") or []),
        )
        self._calls(trace)
        self._slot_changes(trace)
        self._checklist(trace.get("checklist"))
        for c in trace.get("corrections") or []:
            emit(
                CorrectionEvent,
                status=c.get("status", "queued"),
                step=c.get("step"),
                text=c.get("text", ""),
                channel=c.get("channel"),
                severity=c.get("severity"),
                reason=c.get("kind"),
            )
        self._slm(trace.get("slm_calls"))
        self._transaction(trace.get("transaction"))
        for bot in trace.get("bot") or []:
            emit(BotUtteranceEvent, text=bot["text"], source=bot.get("source") or "llm")

    def _calls(self, trace: Mapping[str, Any]) -> None:
        emit = self.publisher.emit
        gates = list(trace.get("gate") or [])
        for call in trace.get("llm_calls") or []:
            name, outcome = call.get("name", ""), call.get("outcome", "ok")
            emit(ToolCallEvent, name=name, args=dict(call.get("args") or {}), by="llm")
            gate = next((g for g in gates if g.get("tool") == name), None)
            if gate is not None:
                gates.remove(gate)
                self._gate(gate)
            emit(
                ToolResultEvent,
                name=name,
                outcome=_OUTCOMES.get(outcome, "error"),
                reason=None if outcome == "ok" else outcome,
                by="llm",
            )
        for gate in gates:
            self._gate(gate)
        for fired in trace.get("fired") or []:
            name = fired.get("tool", "")
            emit(ToolCallEvent, name=name, args=dict(fired.get("args") or {}), by="engine")
            emit(
                ToolResultEvent,
                name=name,
                outcome="ok" if fired.get("ok") else "error",
                by="engine",
            )

    def _gate(self, gate: Mapping[str, Any]) -> None:
        self.publisher.emit(
            GateDecision,
            tool=gate.get("tool", ""),
            decision="allow" if gate.get("decision") == "allow" else "veto",
            reason=gate.get("reason"),
            open_steps=list(gate.get("open") or []),
        )

    def _slot_changes(self, trace: Mapping[str, Any]) -> None:
        now = dict(trace.get("slots") or {}) | dict(trace.get("variables") or {})
        for name, record in now.items():
            before = self._slots.get(name)
            if before is None and record.get("status") == "empty":
                continue
            if before is not None and all(before.get(k) == record.get(k) for k in _SLOT_KEYS):
                continue
            self.publisher.emit(
                SlotChange,
                slot=name,
                status=record.get("status") or "filled",
                value=record.get("value"),
                source=record.get("source"),
                previous_status=before.get("status") if before else None,
            )
            self._slots[name] = record

    def _checklist(self, checklist: Mapping[str, Any] | None) -> None:
        if not checklist:
            return
        steps = dict(checklist.get("steps") or {})
        violation = checklist.get("last_violation")
        if steps == self._steps and violation == self._violation:
            return
        self._steps, self._violation = steps, violation
        current = checklist.get("current")
        self.publisher.emit(
            ChecklistStatus,
            procedure=checklist.get("procedure", "main"),
            current_step=current,
            last_violation=violation,
            steps=[
                {"id": s, "title": self.titles.get(s, s), "state": state, "current": s == current}
                for s, state in steps.items()
            ],
        )

    def _slm(self, calls: Any) -> None:
        if not isinstance(calls, int) or not calls:
            return  # live calls publish each logic_slm call as it is metered
        for n in range(calls):
            self.publisher.emit(MonitorCheck, request_id=f"t{self.publisher.turn}-{n + 1}")

    def _transaction(self, txn: Mapping[str, Any] | None) -> None:
        if txn:
            self.publisher.emit(
                TransactionEvent,
                name=txn.get("intent"),
                status=str(txn.get("status") or ""),
                state=dict(txn),
            )
