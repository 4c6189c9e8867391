"""The event schema and the in-memory publisher: numbering, redaction, replay then live."""

from __future__ import annotations

import asyncio
import gc
import json
import types
from pathlib import Path

import pytest
from pydantic import ValidationError

from pipecat_steward.events import EventHub, EventPublisher, MemoryEventStore, parse_event
from pipecat_steward.events.publisher import UNBUILT_MAX
from pipecat_steward.events.schema import (
    SCHEMA_VERSION,
    BotUtteranceEvent,
    CallerTranscript,
    SlotChange,
    ToolResultEvent,
    event_kinds,
    parse_event_or_none,
)
from pipecat_steward.events.sqlite_store import SQLiteEventStore

CANARY = "4929-1234-5678"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _redact(text: str) -> str:
    return text.replace(CANARY, "[redacted]")


def test_every_kind_round_trips_through_json() -> None:
    pub = EventPublisher("s1")
    for model in event_kinds().values():
        required = {
            n: _sample(f.annotation)
            for n, f in model.model_fields.items()
            if f.is_required() and n not in ("session", "seq", "t")
        }
        pub.emit(model, **required)
    events = pub.events
    assert [e.kind for e in events] == list(event_kinds())
    assert all(parse_event(e.model_dump_json()) == e for e in events)
    assert [e.seq for e in events] == list(range(1, len(event_kinds()) + 1))
    assert all(e.schema_version == SCHEMA_VERSION for e in events)


def _sample(annotation: object) -> object:
    text = str(annotation)
    if "float" in text:
        return 1.0
    if "Literal" in text:
        return text.split("'")[1]
    if "dict" in text:
        return {}
    return "x"


def test_unknown_kind_is_skipped_and_bad_fields_fail() -> None:
    assert (
        parse_event_or_none({"kind": "from_the_future", "session": "s", "seq": 1, "t": 0}) is None
    )
    with pytest.raises(ValidationError):
        parse_event(
            {
                "kind": "bot_utterance",
                "session": "s",
                "seq": 1,
                "t": 0,
                "text": "hi",
                "source": "shouted",
            }
        )


def test_emit_stamps_time_turn_and_redacts_every_string() -> None:
    clock = Clock()
    pub = EventPublisher("s1", redact=_redact, clock=clock)
    clock.now = 101.5
    pub.turn = 3
    pub.emit(CallerTranscript, text=f"my card is {CANARY}")
    clock.now, pub.turn = 102.0, 4  # read later: each event keeps its own moment
    pub.emit(SlotChange, slot="card", status="filled", value={"n": CANARY, CANARY: 1})
    pub.emit(ToolResultEvent, name="pay", outcome="vetoed", result={"echo": [CANARY]})
    clock.now, pub.turn = 110.0, 9
    said, slot, result = pub.events
    assert (said.t, said.turn) == (1.5, 3) and (slot.t, result.turn) == (2.0, 4)
    assert CANARY not in "".join(e.model_dump_json() for e in pub.events)


async def test_subscribe_replays_then_follows_live_and_ends_on_close() -> None:
    pub = EventPublisher("s1")
    pub.emit(BotUtteranceEvent, text="hello", source="preempt")
    got: list[str] = []

    async def read() -> None:
        async for event in pub.subscribe():
            got.append(event.kind)

    reader = asyncio.create_task(read())
    await asyncio.sleep(0)
    pub.emit(CallerTranscript, text="hi")
    await pub.aclose("done")
    await asyncio.wait_for(reader, 1)
    assert got == ["bot_utterance", "caller_transcript", "call_ended"]


async def test_a_failing_sink_does_not_stop_others() -> None:
    pub = EventPublisher("s1")
    seen: list[int] = []

    def broken(_event: object) -> None:
        raise RuntimeError("boom")

    pub.sinks += [broken, lambda e: seen.append(e.seq)]
    pub.emit(CallerTranscript, text="hi")
    assert seen == [1]


async def test_hub_replays_stored_then_live_and_continues_seq() -> None:
    hub = EventHub(MemoryEventStore())
    first = await hub.open("call")
    first.start("clinic")
    await hub.close("call")
    again = await hub.open("call")
    again.emit(CallerTranscript, text="back")
    seqs: list[int] = []

    async def read() -> None:
        async for event in hub.subscribe("call"):
            seqs.append(event.seq)

    reader = asyncio.create_task(read())
    await asyncio.sleep(0.01)
    await hub.close("call")
    await asyncio.wait_for(reader, 1)
    assert seqs == [1, 2, 3, 4]
    assert [s.agent for s in await hub.sessions()] == ["clinic"]


class _Card:
    """A value object whose text is the secret (as a tool might return one)."""

    def __str__(self) -> str:
        return f"card {CANARY}"


@pytest.mark.parametrize(
    "value",
    [
        {CANARY},
        frozenset({CANARY}),
        CANARY.encode(),
        _Card(),
        {(CANARY, 1): "x"},
        [{"n": {CANARY}}],
    ],
    ids=["set", "frozenset", "bytes", "object", "tuple key", "nested set"],
)
async def test_a_secret_in_any_value_reaches_no_client_store_or_kept_event(
    value: object, tmp_path: Path
) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    pub = EventPublisher("s1", redact=_redact, store=store)
    sent: list[str] = []
    pub.sinks.append(lambda e: sent.append(json.dumps(e.model_dump(mode="json"))))
    pub.emit(ToolResultEvent, name="pay", outcome="ok", result={"echo": value})
    pub.emit(SlotChange, slot="card", status="filled", value=value)
    await pub.flush()
    stored = [e.model_dump_json() for e in await store.read("s1")]
    kept = [e.model_dump_json() for e in pub.events]
    await store.close()
    assert len(sent) == len(stored) == len(kept) == 2  # every event went everywhere
    assert CANARY not in "".join(sent + stored + kept)


_SHARED = (type, types.ModuleType, types.FunctionType, types.MethodType)
"""Code and classes: every call shares them (a function leads to its module's globals)."""


def _tracked_from(root: object) -> int:
    """Objects the cycle collector tracks that ``root`` holds (what a full collection walks)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        item = todo.pop()
        if id(item) in seen or isinstance(item, _SHARED) or not gc.is_tracked(item):
            continue
        seen.add(id(item))
        todo.extend(gc.get_referents(item))
    return len(seen)


def test_kept_events_hold_nothing_the_cycle_collector_walks() -> None:
    # Every live call keeps its events: a full collection walks each object they hold, so
    # those objects cost every call in the process, at every collection. Events that wait to
    # be built hold their fields, but never more than UNBUILT_MAX of them wait.
    pub = EventPublisher("s1")
    held: list[int] = []
    for _ in range(3):
        for _ in range(UNBUILT_MAX):  # two rounds of UNBUILT_MAX events: none left unbuilt
            pub.emit(SlotChange, slot="name", status="filled", value={"v": ["Ada", {"k": 1}]})
            pub.emit(ToolResultEvent, name="pay", outcome="ok", result={"echo": [1, {"x": 2}]})
        gc.collect()
        held.append(_tracked_from(pub))
    pub.emit(SlotChange, slot="name", status="filled", value={"v": ["Ada", {"k": 1}]})
    waiting = _tracked_from(pub)
    assert held[2] == held[1] == held[0]
    assert 0 < waiting - held[0] <= 8  # the one event waiting, until read
    assert len(pub.events) == 6 * UNBUILT_MAX + 1 and _tracked_from(pub) == held[0]
