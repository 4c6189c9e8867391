"""Turn traces (``steward simulate --json`` lines) into the studio's events.

A trace holds one caller turn's outcome; the page wants what happened, in order. ``TraceReader``
remembers the previous turn so each event says what changed: a slot whose settled value was
replaced is marked ``corrected`` with its ``previous`` value, and the checklist is sent only
when a step's state moved.

Event types (every event has ``type`` and ``turn``):

- ``caller``: ``text``, the caller's final transcript;
- ``utterance``: ``text`` and ``source`` (llm, preempt, announce, note), what the bot said;
- ``tool_call``: ``name``, ``args``, ``outcome`` (ok, refused, vetoed, failed) and ``by``
  (llm, or engine for executors the engine fired);
- ``gate``: ``tool``, ``decision`` (allow, veto), ``reason``, ``open`` (steps still open);
- ``slot``: ``name``, ``kind`` (slot, variable), ``status``, ``value``, ``source``,
  ``previous`` and ``corrected``;
- ``checklist``: ``current`` and ``steps`` (step id → done, open, not_applicable, blocked),
  ``last_violation`` when known;
- ``correction``: a monitor correction (``step``, ``kind``, ``severity``, ``channel``, ``text``);
- ``slm_call``: ``purpose``, ``calls``, and ``latency_ms`` / ``cost_usd`` when known;
- ``extraction``: ``written``, ``proposals``, ``refused``;
- ``engine``: ``phase``, ``visible_tools``, ``asks``, ``status``;
- ``transaction``: the transaction summary when the agent has intents.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["TraceReader", "events_from_traces", "read_trace_file"]

Event = dict[str, Any]


class TraceReader:
    """Reads turn traces in order and yields the events each one adds."""

    def __init__(self) -> None:
        self._slots: dict[str, Mapping[str, Any]] = {}
        self._steps: Mapping[str, str] = {}

    def events(self, trace: Mapping[str, Any]) -> list[Event]:
        """The events of one turn trace."""
        turn = int(trace.get("turn", 0))
        out: list[Event] = []
        if trace.get("user"):
            out.append({"type": "caller", "text": trace["user"]})
        out.append(_engine(trace))
        out += _calls(trace)
        out += self._slot_events(trace)
        if trace.get("extracted"):
            out.append({"type": "extraction", **_extraction(trace["extracted"])})
        out += self._checklist(trace)
        out += [{"type": "correction", **dict(c)} for c in trace.get("corrections") or []]
        out += _slm(trace)
        if trace.get("transaction"):
            out.append({"type": "transaction", **dict(trace["transaction"])})
        out += [
            {"type": "utterance", "text": b["text"], "source": b.get("source", "llm")}
            for b in trace.get("bot") or []
        ]
        return [{**e, "turn": turn} for e in out]

    def _slot_events(self, trace: Mapping[str, Any]) -> list[Event]:
        now = {n: ("slot", r) for n, r in (trace.get("slots") or {}).items()}
        now |= {n: ("variable", r) for n, r in (trace.get("variables") or {}).items()}
        out: list[Event] = []
        for name, (kind, record) in now.items():
            before = self._slots.get(name)
            if before is not None and _same(before, record):
                continue
            out.append(_slot(name, kind, record, before))
            self._slots[name] = record
        return out

    def _checklist(self, trace: Mapping[str, Any]) -> list[Event]:
        checklist = trace.get("checklist")
        if not checklist:
            return []
        steps = dict(checklist.get("steps") or {})
        if steps == self._steps and "last_violation" not in checklist:
            return []
        self._steps = steps
        return [{"type": "checklist", **dict(checklist)}]


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    keys = ("status", "value", "source")
    return all(a.get(k) == b.get(k) for k in keys)


def _slot(
    name: str, kind: str, record: Mapping[str, Any], before: Mapping[str, Any] | None
) -> Event:
    previous = before.get("value") if before else None
    settled = before is not None and before.get("status") not in (None, "empty", "pending")
    corrected = settled and previous is not None and previous != record.get("value")
    return {
        "type": "slot",
        "name": name,
        "kind": kind,
        "status": record.get("status"),
        "value": record.get("value"),
        "source": record.get("source"),
        "previous": previous,
        "corrected": corrected,
    }


def _engine(trace: Mapping[str, Any]) -> Event:
    return {
        "type": "engine",
        "phase": trace.get("phase"),
        "visible_tools": list(trace.get("visible_tools") or []),
        "asks": list(trace.get("asks") or []),
        "status": trace.get("status"),
    }


def _calls(trace: Mapping[str, Any]) -> list[Event]:
    gates = list(trace.get("gate") or [])
    out: list[Event] = []
    for call in trace.get("llm_calls") or []:
        gate = next((g for g in gates if g.get("tool") == call.get("name")), None)
        if gate is not None:
            gates.remove(gate)
            out.append({"type": "gate", **dict(gate)})
        out.append({"type": "tool_call", "by": "llm", **dict(call)})
    out += [{"type": "gate", **dict(g)} for g in gates]
    for fired in trace.get("fired") or []:
        outcome = "ok" if fired.get("ok") else "failed"
        out.append(
            {"type": "tool_call", "by": "engine", "name": fired.get("tool"),
             "args": fired.get("args", {}), "outcome": outcome}  # fmt: skip
        )
    return out


def _extraction(extracted: Mapping[str, Any]) -> Event:
    return {
        "written": list(extracted.get("written") or []),
        "proposals": list(extracted.get("proposals") or []),
        "refused": list(extracted.get("refused") or []),
    }


def _slm(trace: Mapping[str, Any]) -> list[Event]:
    calls = trace.get("slm_calls")
    if isinstance(calls, list):
        return [{"type": "slm_call", **dict(c)} for c in calls]  # pyright: ignore[reportUnknownArgumentType]
    if calls:
        return [{"type": "slm_call", "purpose": "monitor", "calls": calls}]
    return []


def events_from_traces(traces: Iterable[Mapping[str, Any]]) -> list[Event]:
    """Every event of a sequence of turn traces, in order."""
    reader = TraceReader()
    return [event for trace in traces for event in reader.events(trace)]


def read_trace_file(path: Path) -> list[Event]:
    """The events of a ``steward simulate --json`` output file (one JSON object per line).

    Header lines a folder run prints (``== name``) and blank lines are skipped.
    """
    traces: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if text.startswith("{"):
            traces.append(json.loads(text))
    return events_from_traces(traces)
