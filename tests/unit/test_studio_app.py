"""The studio's routes and its reading of turn traces, without a browser (FastAPI's TestClient)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pipecat_steward.events.hub import EventHub
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.store import MemoryEventStore
from pipecat_steward.studio import StudioConfig, create_app
from pipecat_steward.studio.trace_events import TraceReader

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"

VETO_TURN: dict[str, Any] = {
    "turn": 1,
    "user": "just charge me now",
    "phase": "collection",
    "status": "in_progress",
    "llm_calls": [{"name": "collect_payment", "args": {"amount": 40}, "outcome": "refused"}],
    "gate": [
        {
            "tool": "collect_payment",
            "decision": "veto",
            "reason": "prerequisites",
            "open": ["authenticate"],
        }
    ],
    "bot": [{"text": "I need to verify you first.", "source": "llm"}],
    "slots": {"welcome": {"status": "filled", "value": True, "source": None}},
    "checklist": {"current": "authenticate", "steps": {"authenticate": "open"}},
}
DONE_TURN: dict[str, Any] = {
    "turn": 2,
    "user": "Ada Lovelace",
    "phase": "collection",
    "status": "in_progress",
    "llm_calls": [{"name": "find_patient", "args": {}, "outcome": "ok"}],
    "bot": [{"text": "Found you.", "source": "preempt"}],
    "slots": {"welcome": {"status": "filled", "value": True, "source": None}},
    "variables": {"date_of_birth": {"status": "filled", "value": "1990-12-10"}},
    "checklist": {"current": "confirm", "steps": {"authenticate": "done"}},
}


def kinds(publisher: EventPublisher) -> list[str]:
    return [e.kind for e in publisher.events]


def test_a_trace_turn_becomes_events_in_the_order_they_happened() -> None:
    publisher = EventPublisher("s")
    TraceReader(publisher, {"authenticate": "Authenticate the caller"}).read(VETO_TURN)
    assert kinds(publisher) == [
        "caller_transcript",
        "engine_decision",
        "tool_call",
        "gate",
        "tool_result",
        "slot_change",
        "checklist",
        "bot_utterance",
    ]
    gate = publisher.events[3]
    assert gate.kind == "gate" and gate.decision == "veto" and gate.open_steps == ["authenticate"]
    result = publisher.events[4]
    assert result.kind == "tool_result" and result.outcome == "refused"
    checklist = publisher.events[6]
    assert checklist.kind == "checklist"
    assert checklist.steps[0].title == "Authenticate the caller"
    assert {e.turn for e in publisher.events} == {1}


def test_only_what_changed_is_emitted_on_the_next_turn() -> None:
    publisher = EventPublisher("s")
    reader = TraceReader(publisher)
    reader.read(VETO_TURN)
    before = len(publisher.events)
    reader.read(DONE_TURN)
    fresh = publisher.events[before:]
    slots = [e.slot for e in fresh if e.kind == "slot_change"]
    assert slots == ["date_of_birth"], "an unchanged slot is not sent again"
    assert [e.kind for e in fresh].count("checklist") == 1
    assert fresh[-1].kind == "bot_utterance" and fresh[-1].source == "preempt"
    reader.read(DONE_TURN | {"turn": 3, "user": "", "bot": [], "llm_calls": []})
    assert "checklist" not in [e.kind for e in publisher.events[len(publisher.events) - 2 :]]


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    path = tmp_path / "call.jsonl"
    path.write_text("== scripted\n" + "\n".join(json.dumps(t) for t in (VETO_TURN, DONE_TURN)))
    return path


def test_a_trace_file_replays_as_a_stored_session(trace_file: Path) -> None:
    config = StudioConfig(CLINIC, mode="replay", replay=str(trace_file))
    with TestClient(create_app(config)) as client:
        settings = client.get("/api/config").json()
        assert settings["mode"] == "replay" and settings["session"] == "trace-call"
        listed = client.get("/api/sessions").json()
        assert [s["id"] for s in listed] == ["trace-call"] and not listed[0]["live"]
        events = client.get("/api/sessions/trace-call/events").json()
        assert events[0]["kind"] == "call_started" and events[-1]["kind"] == "call_ended"
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        with client.websocket_connect("/ws/trace-call") as socket:
            streamed = [socket.receive_json() for _ in events]
        assert streamed == events
        assert client.get("/api/sessions/nobody/events").status_code == 404
        assert client.post("/api/say", json={"text": "hi"}).status_code == 409


async def test_sessions_are_listed_newest_first_and_live_ones_are_marked() -> None:
    hub = EventHub(MemoryEventStore())
    for n, session in enumerate(("old", "new")):
        publisher = await hub.open(session)
        publisher.start("clinic")
        await publisher.flush()
        if n == 0:
            await hub.close(session)
    app = create_app(StudioConfig(CLINIC, mode="replay"), hub=hub)
    with TestClient(app) as client:
        listed = client.get("/api/sessions").json()
    assert [s["id"] for s in listed] == ["new", "old"]
    assert [s["live"] for s in listed] == [True, False]


def test_the_page_and_the_agent_picture_are_served(trace_file: Path) -> None:
    config = StudioConfig(CLINIC, mode="replay", replay=str(trace_file))
    with TestClient(create_app(config)) as client:
        page = client.get("/")
        assert page.status_code == 200 and "static/studio.js" in page.text
        assert client.get("/static/studio.js").status_code == 200
        agent = client.get("/api/agent").json()
        assert [s["id"] for s in agent["steps"]][:2] == ["authenticate", "confirm_identity"]
        assert {"welcome", "date_of_birth"} <= {s["name"] for s in agent["slots"]}
        picture = client.get("/api/picture")
        assert picture.status_code == 200
        if picture.headers["content-type"].startswith("image/svg"):
            assert "step_authenticate" in picture.text  # the node the page highlights
