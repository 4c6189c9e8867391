"""Conversation events reach the RTVI client batched: one message per flush, in order.

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

from pipecat_steward.events.live import RTVI_TYPE, RTVI_VERSION
from pipecat_steward.events.schema import BotUtteranceEvent, CallerTranscript
from pipecat_steward.pipecat.steward import Steward

BELLA = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"


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


async def _flushed(steward: Steward, user: str, *, first: bool) -> list[dict[str, Any]]:
    """The events one inference sends the client, from its request to its completion."""
    outcome = await steward.driver.inference(user, first_turn=first)
    done = await steward.driver.complete(outcome, acted=False, said="Sure.")
    messages = [*outcome.messages, *done.messages]
    return [e for m in messages if m["type"] == RTVI_TYPE for e in m["events"]]


async def test_an_inference_flush_carries_what_that_inference_recorded() -> None:
    # The recorder syncs at the session's boundaries: a flush holds every event recorded
    # before it, with no relay event needed to bring them in.
    steward = Steward.from_folder(BELLA, supervise=False)
    await steward.start()
    published = steward.events.publisher.events
    first = await _flushed(steward, "Hi there", first=True)
    assert [e["kind"] for e in first][:3] == ["call_started", "caller_transcript", "engine_decision"]
    assert [e["seq"] for e in first] == [e.seq for e in published]
    second = await _flushed(steward, "A table for 4 on July 17th", first=False)
    assert second[0]["kind"] == "caller_transcript" and second[0]["turn"] == 2
    assert [e["seq"] for e in first + second] == [e.seq for e in published]
