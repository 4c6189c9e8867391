"""The usage ledger: SQLite rows written off the caller's thread, JSONL export, no raising."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

from pipecat_steward.core.costing import UsageEvent
from pipecat_steward.storage.ledger import SQLiteLedger, export_jsonl


def event(n: int = 0, scope: str = "extraction") -> UsageEvent:
    return UsageEvent(
        provider="openai",
        model="gpt-4o-mini",
        input_tokens=350 + n,
        output_tokens=40,
        latency_ms=12.5,
        scope=scope,  # type: ignore[arg-type]
        tenant_id="t",
        agent_id="a",
        session_id=f"s{n}",
        at="2026-09-03T10:00:00.000+00:00",
    )


def test_rows_round_trip(tmp_path: Path) -> None:
    """Rows come back exactly as recorded, in order."""
    with SQLiteLedger(tmp_path / "usage.sqlite") as ledger:
        rows = [event(i, scope) for i, scope in enumerate(["extraction", "adherence", "llm_judge"])]
        for row in rows:
            ledger.record(row)
        ledger.flush()
        assert ledger.events() == rows
        assert ledger.dropped == 0


def test_record_does_not_write_on_the_callers_thread(tmp_path: Path) -> None:
    """The insert happens on the ledger's own thread (the caller only enqueues)."""
    with SQLiteLedger(tmp_path / "usage.sqlite") as ledger:
        writer = ledger._thread  # the background writer
        assert writer is not threading.current_thread() and writer.daemon
        ledger.record(event())
        ledger.flush()
        assert len(ledger.events()) == 1


def test_rows_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "usage.sqlite"
    with SQLiteLedger(path) as ledger:
        ledger.record(event(1))
    with SQLiteLedger(path) as again:
        again.record(event(2))
        again.flush()
        assert [e.session_id for e in again.events()] == ["s1", "s2"]


def test_unusable_database_drops_rows_but_never_raises(tmp_path: Path) -> None:
    """A path that cannot be a database costs rows, counted, not exceptions."""
    folder = tmp_path / "a-directory"
    folder.mkdir()
    with SQLiteLedger(folder) as ledger:
        ledger.record(event())
        ledger.flush()
        assert ledger.dropped == 1


def test_full_queue_drops_and_counts(tmp_path: Path) -> None:
    """Back-pressure never blocks the caller: beyond max_pending rows are dropped."""
    with SQLiteLedger(tmp_path / "u.sqlite", max_pending=1) as ledger:
        for i in range(200):
            ledger.record(event(i))
        ledger.flush()
        assert ledger.dropped + len(ledger.events()) == 200


def test_jsonl_export(tmp_path: Path) -> None:
    with SQLiteLedger(tmp_path / "usage.sqlite") as ledger:
        ledger.record(event(7))
        ledger.flush()
        out = io.StringIO()
        assert export_jsonl(ledger.events(), out) == 1
    (line,) = out.getvalue().splitlines()
    row = json.loads(line)
    assert row["stage_id"] == "__logic_slm" and row["session_id"] == "s7"
    assert row["input_tokens"] == 357 and row["scope"] == "extraction"
