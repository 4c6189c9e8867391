"""Publish a live call's events: turn traces, monitor corrections, logic_slm calls.

``LiveTrace`` reads the steward after each caller turn (the same trace ``steward simulate``
prints, so a live call and a replay show the same things), adds the agent's variables to the
slot board, and publishes what changed. ``SLMCallSink`` is a usage ledger that also publishes
each logic_slm call with its latency, tokens and cost the moment it is metered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipecat_steward.core.costing import PriceBook, UsageEvent, event_cost
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.schema import MonitorCheck
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.storage.ledger import UsageSink
from pipecat_steward.studio.trace_events import TraceReader
from pipecat_steward.testing.scenario import trace_turn

__all__ = ["LiveTrace", "SLMCallSink"]

_HIDDEN = "•••"


class LiveTrace:
    """Turns a live steward's progress into events, one flush per caller turn."""

    def __init__(self, steward: Steward, publisher: EventPublisher, source: str = "text") -> None:
        self.steward = steward
        self.publisher = publisher
        self.source = source
        procs = steward.agent.procedures
        titles = {s.id: s.title or s.id for s in procs.steps.values()} if procs else {}
        self._reader = TraceReader(publisher, titles)
        self._turns = 0
        self._corrections = 0
        self._extracted: set[int] = set()

    def flush(self) -> None:
        """Publish the events of every caller turn recorded since the last flush."""
        session = self.steward.session
        records = session.turns[self._turns :]
        self._turns = len(session.turns)
        for offset, record in enumerate(records):
            number = self._turns - len(records) + offset + 1
            trace = trace_turn(number, session, record)
            trace["variables"] = self._variables()
            trace["corrections"] = self._new_corrections()
            trace["extracted"] = self._new_extractions()
            trace["checklist"] = self._checklist(trace.get("checklist"))
            self._reader.read(trace, source=self.source)  # the publisher redacts

    def _variables(self) -> dict[str, dict[str, Any]]:
        values = self.steward.session.state.variables
        out: dict[str, dict[str, Any]] = {}
        for spec in self.steward.agent.variables:
            value = values.get(spec.name)
            shown = _HIDDEN if spec.sensitive and value is not None else value
            status = "empty" if value is None else "filled"
            source = "platform" if spec.linked else ("extractor" if spec.extraction else None)
            out[spec.name] = {"status": status, "value": shown, "source": source}
        return out

    def _new_corrections(self) -> list[dict[str, Any]]:
        monitor = self.steward.monitor
        if monitor is None:
            return []
        fresh = monitor.stats.corrections[self._corrections :]
        self._corrections += len(fresh)
        return [dict(c) for c in fresh]

    def _new_extractions(self) -> dict[str, Any]:
        extractor = self.steward.extractor
        if extractor is None:
            return {}
        merged: dict[str, list[Any]] = {"written": [], "proposals": [], "refused": []}
        for turn, found in sorted(extractor.stats.by_turn.items()):
            if turn not in self._extracted:
                self._extracted.add(turn)
                for key, items in found.items():
                    merged.setdefault(key, []).extend(items)
        return merged if any(merged.values()) else {}

    def _checklist(self, checklist: dict[str, Any] | None) -> dict[str, Any] | None:
        status = self.steward.session.checklist()
        if checklist is None or status is None:
            return checklist
        violations = [p.get("last_violation") for p in status.get("procedures", [])]
        found = [v for v in violations if v]
        return {**checklist, "last_violation": found[-1] if found else None}


class SLMCallSink:
    """A usage ledger that forwards to another and publishes each call as a ``monitor_check``."""

    def __init__(
        self, forward: UsageSink, publisher: Callable[[], EventPublisher | None],
        book: PriceBook | None,
    ) -> None:  # fmt: skip
        self.forward = forward
        self.publisher = publisher
        self.book = book
        self.calls = 0

    def record(self, event: UsageEvent) -> None:
        """Meter the call, then publish it (latency, cost when priced)."""
        self.forward.record(event)
        publisher = self.publisher()
        if publisher is None:
            return
        self.calls += 1
        cost = event_cost(self.book, event) if self.book is not None else None
        publisher.emit(
            MonitorCheck, request_id=f"slm-{self.calls}",
            purpose="extractor" if event.scope == "extraction" else "monitor",
            latency_ms=round(event.latency_ms, 1), verdict=str(event.outcome),
            cost_usd=float(cost) if cost is not None else None, model=event.model,
        )  # fmt: skip
