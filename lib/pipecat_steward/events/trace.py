"""The ``steward simulate --json`` trace, built from conversation events.

A caller turn is the run of events up to its ``turn_ended``; the state fields of its trace
(slots, checklist, transaction) are the fold of every event up to there. Monitored runs add
``slm_calls``, ``corrections`` and ``extracted`` themselves (the defaults here are a run
without the monitor).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pipecat_steward.events import schema as ev

__all__ = ["traces_from_events"]


class _Fold:
    """State that outlives a turn: slots, checklists, the transaction."""

    def __init__(self) -> None:
        self.slots: dict[str, dict[str, Any]] = {}
        self.checklists: dict[str, ev.ChecklistStatus] = {}
        self.current: str | None = None
        self.transaction: dict[str, Any] | None = None

    def take(self, event: ev.Event) -> None:
        if isinstance(event, ev.SlotChange):
            record = {"status": event.status, "value": event.value, "source": event.source}
            self.slots[event.slot] = record
        elif isinstance(event, ev.ChecklistStatus):
            self.checklists[event.procedure] = event
            self.current = event.current_step
        elif isinstance(event, ev.TransactionEvent):
            self.transaction = dict(event.state)

    def checklist(self) -> dict[str, Any] | None:
        if not self.checklists:
            return None
        steps = {s.id: s.state for c in self.checklists.values() for s in c.steps}
        return {"current": self.current, "steps": steps}


def traces_from_events(events: Iterable[ev.Event]) -> list[dict[str, Any]]:
    """One trace dict per caller turn (per ``turn_ended`` event), as ``steward simulate`` prints."""
    fold, turn, traces = _Fold(), list[ev.Event](), list[dict[str, Any]]()
    for event in events:
        fold.take(event)
        if isinstance(event, ev.TurnEnded):
            traces.append(_trace(event, turn, fold))
            turn = []
        else:
            turn.append(event)
    return traces


def _trace(end: ev.TurnEnded, events: Sequence[ev.Event], fold: _Fold) -> dict[str, Any]:
    decisions = [e for e in events if isinstance(e, ev.EngineDecision)]
    spoken = [d for d in decisions if not d.preempt and not d.calls]
    return {
        "turn": end.turn,
        "user": next((e.text for e in events if isinstance(e, ev.CallerTranscript)), ""),
        "visible_tools": list(decisions[0].visible_tools) if decisions else [],
        "llm_calls": [
            {"name": c.name, "args": dict(c.args), "outcome": _outcome(r)}
            for c, r in _calls(events, "llm")
        ],
        "fired": [
            {"tool": c.name, "args": dict(c.args), "ok": r.outcome == "ok", "task": c.task}
            for c, r in _calls(events, "engine")
        ],
        "bot": [
            {"text": e.text, "source": e.source}
            for e in events
            if isinstance(e, ev.BotUtteranceEvent)
        ],
        "phase": decisions[-1].phase if decisions else "collection",
        "asks": _asks(decisions),
        "slots": {n: dict(r) for n, r in fold.slots.items() if r["status"] != "empty"},
        "status": end.status,
        "ended": end.ended,
        "payloads": [dict(e.part) for e in events if isinstance(e, ev.PayloadEvent)],
        "gate": [_gate(e) for e in events if isinstance(e, ev.GateDecision)],
        "transaction": fold.transaction,
        "checklist": fold.checklist(),
        "slm_calls": 0,
        "corrections": [],
        "extracted": {},
        "hints": [dict(h) for d in spoken for h in d.hints],
        "events": [
            {"tag": e.tag, "n": e.n, **e.data} for e in events if isinstance(e, ev.DebugEvent)
        ],
    }


def _calls(
    events: Sequence[ev.Event], by: str
) -> list[tuple[ev.ToolCallEvent, ev.ToolResultEvent]]:
    """Each call by ``by`` with its result (the recorder emits them as adjacent pairs)."""
    calls = [e for e in events if isinstance(e, ev.ToolCallEvent) and e.by == by]
    results = [e for e in events if isinstance(e, ev.ToolResultEvent) and e.by == by]
    return list(zip(calls, results, strict=True))


def _outcome(result: ev.ToolResultEvent) -> str:
    # a vetoed call reaches the model as a refusal
    return "refused" if result.outcome == "vetoed" else result.outcome


def _asks(decisions: Sequence[ev.EngineDecision]) -> list[str]:
    """Slots asked for: in preempted messages and in the LLM's final reply."""
    spoken = [d for d in decisions if d.preempt]
    spoken += [d for d in decisions[-1:] if not d.preempt and not d.calls]
    return sorted({n for d in spoken for n in d.asks})


def _gate(event: ev.GateDecision) -> dict[str, Any]:
    entry: dict[str, Any] = {"tool": event.tool, "decision": event.decision}
    if event.decision == "veto":
        entry.update(reason=event.reason, open=list(event.open_steps))
    elif event.log:
        entry["log"] = event.log
    return entry
