"""Conversation events reach the RTVI client batched: one message per flush, in order; the
recorder syncs as the relay's bus publishes (no subscriber of its own) and records what it
always recorded.

Every event the publisher emits until the session's client messages are next taken joins ONE
``steward_events`` message (``{"type", "version", "events"}``); a message another producer
queues in between keeps its place, and what comes after it starts a new batch.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path
from typing import Any

import pytest
from tests.integration.test_stale_worker import ServerMessages

from pipecat_steward.events import EventPublisher
from pipecat_steward.events.live import RTVI_TYPE, RTVI_VERSION
from pipecat_steward.events.recorder import record_session
from pipecat_steward.events.schema import BotUtteranceEvent, CallerTranscript, DebugEvent
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing.player import play_scenario
from pipecat_steward.testing.scenario import load_scenario, load_scenarios
from pipecat_steward.testing.simulate import PipelinePlayer

BOTS = Path(__file__).resolve().parents[2] / "bots"
BELLA, CLINIC = BOTS / "bella_notte", BOTS / "clinic"


def _steward_messages(messages: list[dict[str, Any]]) -> list[list[int]]:
    """The seq numbers of each steward events message, one list per message."""
    return [[e["seq"] for e in m["events"]] for m in messages if m["type"] == RTVI_TYPE]


@pytest.mark.parametrize("count", [1, 2, 7])
def test_the_events_of_one_flush_travel_in_one_message(count: int) -> None:
    steward = Steward.from_folder(BELLA, supervise=False)
    publisher, session = steward.events.publisher, steward.session
    for i in range(count):
        publisher.emit(CallerTranscript, text=f"hello {i}", source="text")
    first = session.take_status()
    assert _steward_messages(first) == [list(range(1, count + 2))]  # call_started first
    assert all(m["version"] == RTVI_VERSION for m in first if m["type"] == RTVI_TYPE)
    assert session.take_status() == []
    publisher.emit(BotUtteranceEvent, text="Welcome!", source="llm")
    publisher.emit(BotUtteranceEvent, text="How many guests?", source="preempt")
    assert _steward_messages(session.take_status()) == [[count + 2, count + 3]]


def test_a_message_queued_between_events_keeps_its_place() -> None:
    steward = Steward.from_folder(BELLA, supervise=False)
    publisher, session = steward.events.publisher, steward.session
    publisher.emit(CallerTranscript, text="hi", source="text")
    session.client_outbox.append({"type": "other"})
    publisher.emit(BotUtteranceEvent, text="Welcome!", source="llm")
    taken = session.take_status()
    assert [m["type"] for m in taken] == [RTVI_TYPE, "other", RTVI_TYPE]
    assert _steward_messages(taken) == [[1, 2], [3]]
    sent = [e for m in taken if m["type"] == RTVI_TYPE for e in m["events"]]
    assert sent == [e.model_dump(mode="json") for e in publisher.events]


class _Referenced(PipelinePlayer):
    """The pipeline player with a reference recorder fed as the events once were: synced from
    a bus subscriber of its own on every relay event, its turns ended with the player's."""

    def add_reference(self) -> EventPublisher:
        self.reference = EventPublisher("reference")
        self.recorder = record_session(
            self.session, self.reference, monitor=lambda: self.steward.monitor
        )
        self.steward.relay.bus.subscribe(lambda _: self.recorder.sync(), name="reference")
        return self.reference

    def turn_ended(self, number: int) -> None:
        super().turn_ended(number)
        self.recorder.end_turn(number)


def _comparable(events: list[Any]) -> list[dict[str, Any]]:
    own = {"call_started", "call_ended", "monitor_check"}  # the publisher's own, not recorded
    drop = {"t", "seq", "session"}
    rows = [e.model_dump(mode="json") for e in events if e.kind not in own]
    return [{k: v for k, v in row.items() if k not in drop} for row in rows]


@pytest.mark.parametrize(
    "path",
    [BELLA / "scenarios" / "happy_path.yaml", CLINIC / "scenarios" / "charge_me_now.yaml"],
    ids=lambda p: p.stem,
)
async def test_the_steward_records_the_events_a_subscriber_per_relay_event_did(path: Path) -> None:
    # Synced as the bus publishes (no subscriber of its own), the recorder emits exactly the
    # events, in exactly the order, that a recorder synced by a subscriber of its own emits.
    for scenario in load_scenarios(path):
        publisher = EventPublisher(scenario.name)
        player = await _Referenced.start(path.parents[1], scenario, events=publisher)
        reference = player.add_reference()
        async with player.running():
            await play_scenario(player, scenario)
        await player.steward.events.aclose()
        assert _comparable(publisher.events) == _comparable(reference.events)
        assert len(reference.events) > 10
        names = [sub.name for sub in player.steward.relay.bus.subscriptions]
        assert names == ["steward-trace", "reference"]  # no subscriber of the events' own




@pytest.mark.parametrize(
    ("bot", "scenario_file"),
    [
        ("bella_notte", "happy_path.yaml"),
        ("lead_capture", "seed_003_four_turns.yaml"),
        ("order_desk", "cancel_order.yaml"),
    ],
)
async def test_a_turn_s_events_leave_in_one_message_and_none_is_lost(
    bot: str, scenario_file: str
) -> None:
    # While the model's tool calls chain into another inference, the events wait for it: a
    # message per hop crossed the whole pipeline for nothing. None is lost or repeated.
    scenario = load_scenario(BOTS / bot / "scenarios" / scenario_file)
    player = await PipelinePlayer.start(BOTS / bot, scenario)
    messages = ServerMessages()
    async with player.running([messages], rtvi=True):
        await play_scenario(player, scenario)
    batches = _steward_messages(messages.data)
    sent = [seq for batch in batches for seq in batch]
    emitted = [e.seq for e in player.steward.events.publisher.events]
    assert sent == emitted[: len(sent)]
    assert len(sent) >= len(emitted) // 2
    assert any(s for t in scenario.turns for s in t.llm)  # the model does call tools
    assert 0 < len(batches) <= len(scenario.turns)


@pytest.mark.parametrize(
    "data",
    [
        {"text": "Grüße, 東京 ☕", "quote": 'say "hi"\n'},
        {"t": 0.1 + 0.2, "big": 10**18, "tiny": 1e-300, "neg": -0.0},
        {"nested": {"list": [1, [2, {"x": None}]], "flag": True}},
        {},
    ],
)
def test_the_client_gets_each_event_as_the_publisher_keeps_it(data: dict[str, Any]) -> None:
    """The message's events are the kept JSON read back: the same values, in every shape."""
    steward = Steward.from_folder(BELLA, supervise=False)
    publisher, session = steward.events.publisher, steward.session
    publisher.emit(DebugEvent, tag="probe", n=1, data=data)
    session.client_outbox.append({"type": "other"})
    publisher.emit(DebugEvent, tag="probe", n=2, data=data)
    taken = session.take_status()
    sent = [e for m in taken if m["type"] == RTVI_TYPE for e in m["events"]]
    assert sent == [e.model_dump(mode="json") for e in publisher.events]
    assert [e["data"] for e in sent[1:]] == [data, data]
