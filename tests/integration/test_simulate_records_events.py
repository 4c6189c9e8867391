"""``steward simulate --store URL --session ID`` keeps the simulated call's events for replay,
and the ``--json`` trace it prints is the trace those stored events rebuild."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import asyncio
import json
from pathlib import Path

import pytest

from pipecat_steward.cli.main import main
from pipecat_steward.events.schema import Event, GateDecision
from pipecat_steward.events.store import SessionSummary, open_event_store
from pipecat_steward.events.trace import traces_from_events

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"


def _stored(spec: str, session: str) -> tuple[list[Event], list[SessionSummary]]:
    async def read() -> tuple[list[Event], list[SessionSummary]]:
        store = open_event_store(spec)
        try:
            return await store.read(session), await store.sessions()
        finally:
            await store.close()

    return asyncio.run(read())


def test_simulate_keeps_the_events_and_prints_their_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"sqlite:{tmp_path / 'calls.db'}"
    scenario = CLINIC / "scenarios" / "charge_me_now.yaml"
    argv = ["simulate", "--json", "--store", spec, "--session", "rehearsal-1"]
    assert main([*argv, str(CLINIC), str(scenario)]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    events, sessions = _stored(spec, "rehearsal-1")
    assert printed and traces_from_events(events) == printed
    assert events[0].kind == "call_started" and events[-1].kind == "call_ended"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [(s.session, s.agent) for s in sessions] == [("rehearsal-1", "clinic")]
    vetoes = [e for e in events if isinstance(e, GateDecision) and e.decision == "veto"]
    assert vetoes, "charge me now is vetoed by the gate"


def test_a_call_resumed_in_a_second_run_continues_its_stored_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"sqlite:{tmp_path / 'calls.db'}"
    halves = Path(__file__).resolve().parents[1] / "fixtures" / "order_desk_resume"
    agent = CLINIC.parent / "order_desk"
    argv = ["simulate", "--json", "--store", spec, "--session", "call-7"]
    printed = []
    for half in ("part1.yaml", "part2.yaml"):
        assert main([*argv, str(agent), str(halves / half)]) == 0
        printed += [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    events, _ = _stored(spec, "call-7")
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [e.kind for e in events].count("call_started") == 2
    assert traces_from_events(events) == printed
    assert printed[-1]["transaction"]["status"] == "COMPLETED"
