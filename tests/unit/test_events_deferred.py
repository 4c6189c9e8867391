"""Deferred events: built later, yet exactly the events ``emit`` would have built then."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.events import EventPublisher, MemoryEventStore
from pipecat_steward.events.publisher import DEFER_S
from pipecat_steward.events.schema import (
    BotUtteranceEvent,
    CallerTranscript,
    SlotChange,
    ToolResultEvent,
)

SECRETS = ("4929", "1234", "5678")


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def _events(text: str) -> list[tuple[type[Any], dict[str, Any]]]:
    return [
        (CallerTranscript, {"text": text}),
        (BotUtteranceEvent, {"text": text, "source": "llm"}),
        (SlotChange, {"slot": "card", "status": "filled", "value": {text: [text, 1]}}),
        (ToolResultEvent, {"name": "pay", "outcome": "ok", "result": {"echo": text}}),
    ]


_STEPS = st.one_of(
    st.tuples(
        st.sampled_from(["emit", "defer"]), st.integers(0, 3), st.sampled_from([*SECRETS, "x"])
    ),
    st.tuples(st.just("tick"), st.floats(0, 2), st.just("")),
    st.tuples(st.just("turn"), st.integers(0, 9), st.just("")),
    st.tuples(st.just("secret"), st.integers(0, len(SECRETS)), st.just("")),
    st.tuples(st.just("read"), st.integers(0, 2), st.just("")),
)


async def _play(steps: list[tuple[str, Any, str]], *, deferring: bool) -> list[str]:
    """Play ``steps`` on a new publisher; ``deferring=False`` emits every event at once.

    On a running loop, where ``defer`` waits (without one it builds at once), and with no
    await between the steps, so only the readers among them build what was deferred.
    """
    clock, known = Clock(), [0]
    pub = EventPublisher("s", clock=clock)

    def redaction() -> Callable[[str], str]:
        hidden = SECRETS[: known[0]]  # the secrets learnt so far, as a session's bound redactor
        return lambda s: "[redacted]" if s in hidden else s

    pub.redaction = redaction
    for op, arg, text in steps:
        if op in ("emit", "defer"):
            kind, fields = _events(text)[arg]
            (pub.defer if op == "defer" and deferring else pub.emit)(kind, **fields)
        elif op == "tick":
            clock.now += arg
        elif op == "turn":
            pub.turn = arg
        elif op == "secret":
            known[0] = arg
        else:
            (lambda: pub.emitted, lambda: pub.texts(), lambda: pub.events)[arg]()
    return pub.texts()


@settings(max_examples=300, deadline=None)
@given(st.lists(_STEPS, max_size=40))
def test_deferred_events_are_the_events_emit_would_have_built_then(
    steps: list[tuple[str, Any, str]],
) -> None:
    # Order, seq, t, turn and the redaction of the moment are fixed when an event is deferred,
    # whatever changes (time, turn, secrets learnt) before anything reads it.
    deferred = asyncio.run(_play(steps, deferring=True))
    assert deferred == asyncio.run(_play(steps, deferring=False))


READERS: dict[str, Callable[[EventPublisher], Any]] = {
    "emitted": lambda p: p.emitted,
    "texts": lambda p: p.texts(),
    "events": lambda p: p.events,
    "settle": lambda p: p.settle(),
    "emit": lambda p: p.emit(BotUtteranceEvent, text="after", source="llm"),
}


@pytest.mark.parametrize("reader", sorted(READERS))
async def test_every_reader_sees_what_was_deferred_before_it(reader: str) -> None:
    seen: list[int] = []
    pub = EventPublisher("s")
    pub.sinks.append(lambda e: seen.append(e.seq))
    pub.defer(CallerTranscript, text="one")
    pub.defer(CallerTranscript, text="two")
    assert seen == []  # nothing is built before it is read (or DEFER_S passes)
    READERS[reader](pub)
    assert seen[:2] == [1, 2]
    assert [e.text for e in pub.events][:2] == ["one", "two"]  # type: ignore[union-attr]


async def test_a_deferred_event_reaches_a_subscriber_and_the_store_without_a_reader() -> None:
    store = MemoryEventStore()
    pub = EventPublisher("s", store=store)
    got: list[str] = []

    async def follow() -> None:
        async for event in pub.subscribe():
            got.append(event.kind)

    task = asyncio.create_task(follow())
    await asyncio.sleep(0)
    pub.defer(CallerTranscript, text="hello")
    await asyncio.sleep(DEFER_S * 3)
    assert got == ["caller_transcript"]
    assert [e.kind for e in await store.read("s")] == ["caller_transcript"]
    await pub.aclose()
    await task
    assert got == ["caller_transcript", "call_ended"]


async def test_flush_and_close_store_what_was_deferred() -> None:
    store = MemoryEventStore()
    pub = EventPublisher("s", store=store)
    pub.defer(CallerTranscript, text="one")
    await pub.flush()
    assert [e.seq for e in await store.read("s")] == [1]
    pub.defer(CallerTranscript, text="two")
    await pub.aclose("done")
    assert [e.kind for e in await store.read("s")] == [
        "caller_transcript",
        "caller_transcript",
        "call_ended",
    ]


def test_without_a_loop_a_deferred_event_is_built_at_once() -> None:
    pub = EventPublisher("s")
    seen: list[int] = []
    pub.sinks.append(lambda e: seen.append(e.seq))
    pub.defer(CallerTranscript, text="now")
    assert seen == [1]


async def test_an_event_that_cannot_be_built_is_logged_and_the_others_still_come(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from loguru import logger

    handler = logger.add(caplog.handler, level="ERROR")
    try:
        pub = EventPublisher("s")
        pub.defer(CallerTranscript, text="one")
        pub.defer(SlotChange, slot="card")  # no status: the schema refuses it
        pub.defer(CallerTranscript, text="two")
        assert [e.text for e in pub.events] == ["one", "two"]  # type: ignore[union-attr]
        assert [e.seq for e in pub.events] == [1, 2]  # no gap where it would have been
        assert "could not build a SlotChange event" in caplog.text
    finally:
        logger.remove(handler)


async def test_a_closed_publisher_defers_nothing() -> None:
    pub = EventPublisher("s")
    await pub.aclose()
    pub.defer(CallerTranscript, text="late")
    assert [e.kind for e in pub.events] == ["call_ended"]
