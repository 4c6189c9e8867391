"""The event-store contract, one suite over every backend: memory, SQLite and a real
redis-server (started on 127.0.0.1 at a free port for this module, no persistence)."""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aredis
from tests.storage_support.redis_server import redis_server

from pipecat_steward.events import EventHub, EventPublisher
from pipecat_steward.events.redis_store import RedisEventStore
from pipecat_steward.events.schema import (
    CallerTranscript,
    CallStarted,
    SlotChange,
    ToolResultEvent,
)
from pipecat_steward.events.sqlite_store import SQLiteEventStore
from pipecat_steward.events.store import EventStore, MemoryEventStore, open_event_store
from pipecat_steward.exceptions import ConflictError, StoreError

BACKENDS = ["memory", "sqlite", "redis"]
CANARY = "778-41-9923"


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventStore]:
    found: EventStore
    if request.param == "memory":
        found = MemoryEventStore()
    elif request.param == "sqlite":
        found = SQLiteEventStore(tmp_path / "events.db")
    else:
        found = RedisEventStore(
            request.getfixturevalue("redis_url"), prefix=f"t:{uuid.uuid4().hex}"
        )
    yield found
    await found.close()


def _redact(text: str) -> str:
    return text.replace(CANARY, "[redacted]")


async def _call(store: EventStore, session: str, started_at: float, turns: int) -> EventPublisher:
    pub = EventPublisher(session, store=store, redact=_redact)
    pub.emit(CallStarted, agent=f"agent-{session}", started_at=started_at)
    for n in range(1, turns + 1):
        pub.turn = n
        pub.emit(CallerTranscript, text=f"turn {n}")
        pub.emit(SlotChange, slot="n", status="filled", value=n, source="caller")
    await pub.aclose("done")
    return pub


async def test_events_read_back_in_order_and_equal(store: EventStore) -> None:
    pub = await _call(store, "a", 10.0, 5)
    back = await store.read("a")
    assert back == pub.events
    assert [e.seq for e in back] == list(range(1, 13))
    assert [e.seq for e in await store.read("a", after=9)] == [10, 11, 12]


async def test_sessions_do_not_mix_and_unknown_is_empty(store: EventStore) -> None:
    await _call(store, "a", 10.0, 1)
    await _call(store, "b", 20.0, 2)
    assert {e.session for e in await store.read("a")} == {"a"}
    assert len(await store.read("b")) == 6
    assert await store.read("nobody") == []


async def test_sessions_list_newest_first_with_summary(store: EventStore) -> None:
    for session, start in [("old", 1.0), ("newest", 300.0), ("middle", 50.0)]:
        await _call(store, session, start, 1)
    listed = await store.sessions()
    assert [s.session for s in listed] == ["newest", "middle", "old"]
    assert listed[0].agent == "agent-newest" and listed[0].events == 4
    assert [s.session for s in await store.sessions(limit=2)] == ["newest", "middle"]


async def test_a_sensitive_value_never_reaches_the_store(
    store: EventStore, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    pub = EventPublisher("s", store=store, redact=_redact)
    pub.emit(CallerTranscript, text=f"my ssn is {CANARY}")
    pub.emit(SlotChange, slot="ssn", status="filled", value=CANARY)
    pub.emit(ToolResultEvent, name="verify", outcome="ok", result={"ssn": CANARY, CANARY: [CANARY]})
    await pub.aclose()
    stored = "".join(e.model_dump_json() for e in await store.read("s"))
    assert "[redacted]" in stored and CANARY not in stored
    assert CANARY.encode() not in await _raw(store, tmp_path)


async def _raw(store: EventStore, tmp_path: Path) -> bytes:
    """Every byte the backend keeps (the database files, or every Redis value)."""
    if isinstance(store, SQLiteEventStore):
        return b"".join(p.read_bytes() for p in tmp_path.glob("events.db*"))
    if isinstance(store, RedisEventStore):
        client: aredis.Redis = store.client
        out = b""
        async for key in client.scan_iter(match=f"{store.prefix}*"):
            if await client.type(key) == b"stream":
                out += repr(await client.xrange(key)).encode()
        return out
    return repr(store.__dict__).encode()


async def test_hub_replays_a_stored_session_from_a_fresh_process(store: EventStore) -> None:
    await _call(store, "done", 5.0, 2)
    kinds = [e.kind async for e in EventHub(store).subscribe("done")]
    assert kinds[0] == "call_started" and kinds[-1] == "call_ended" and len(kinds) == 6


def test_open_event_store_names_the_forms(tmp_path: Path) -> None:
    assert isinstance(open_event_store("memory:"), MemoryEventStore)
    assert isinstance(open_event_store(f"sqlite:{tmp_path / 'e.db'}"), SQLiteEventStore)
    with pytest.raises(StoreError, match="sqlite:PATH"):
        open_event_store("postgres://x")


# One live publisher per session: a session opened again (a caller reconnecting) ends the
# previous publisher first. Two at once numbered their events alike and a store kept one event
# per number (SQLite lost the second publisher's events; memory held duplicate numbers).


async def _reconnections(hub: EventHub, session: str, plan: random.Random) -> list[str]:
    """Random opens, emits and closes on ``session``; the texts emitted while live."""
    opened: list[EventPublisher] = []
    kept: list[str] = []
    for step in range(plan.randint(1, 12)):
        choice = plan.random()
        if not opened or choice < 0.3:
            opened.append(await hub.open(session))
        elif choice < 0.85:
            publisher = plan.choice(opened)
            text = f"step {step}"
            if publisher.emit(CallerTranscript, text=text):
                kept.append(text)
        else:
            await plan.choice(opened).aclose("ended")
    for publisher in opened:
        await publisher.aclose("ended")
    return kept


@pytest.mark.parametrize("seed", range(40))
async def test_a_session_opened_again_keeps_every_event_once(store: EventStore, seed: int) -> None:
    hub = EventHub(store)
    session = f"reconnect-{seed}"
    kept = await _reconnections(hub, session, random.Random(seed))
    events = await store.read(session)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [e.text for e in events if isinstance(e, CallerTranscript)] == kept
    assert session not in hub.live


async def test_the_replaced_publisher_ends_as_replaced_and_the_new_one_is_live(
    store: EventStore,
) -> None:
    hub = EventHub(store)
    first = await hub.open("s")
    first.emit(CallerTranscript, text="before")
    second = await hub.open("s")
    assert first.closed and hub.live == {"s": second}
    assert not first.emit(CallerTranscript, text="too late")  # the old connection is over
    await first.aclose("ended")  # its host ending it later does not end the new one
    assert hub.live == {"s": second}
    await hub.close("s")
    kinds = [(e.kind, getattr(e, "status", None)) for e in await store.read("s")]
    assert kinds == [
        ("caller_transcript", None),
        ("call_ended", "replaced"),
        ("call_ended", ""),
    ]


# Several workers, one store: a worker that takes a call over (it resumed the call by
# identity) claims the session's events. A stale worker that still emits afterwards must not
# number events like the new one's: a store kept one of each number (SQLite lost the new
# worker's events) or both (memory, Redis). Its writes are refused instead, as a checkpoint
# save of a worker that lost the call is.


async def _second_worker(store: EventStore, tmp_path: Path) -> EventStore:
    """Another process's connection to ``store``'s data (memory: the same object)."""
    if isinstance(store, SQLiteEventStore):
        return SQLiteEventStore(store.path)
    if isinstance(store, RedisEventStore):
        return RedisEventStore(
            aredis.Redis(connection_pool=store.client.connection_pool), prefix=store.prefix
        )
    return store


async def _takeovers(
    hubs: list[EventHub], session: str, plan: random.Random
) -> tuple[list[list[str]], list[EventPublisher]]:
    """Workers take ``session`` over in turn while the ones they replaced still emit.

    Returns what each publisher emitted before the next one claimed the session (what must be
    stored, in order), and the publishers that emitted after that (stale).
    """
    opened: list[EventPublisher] = []
    owed: list[list[str]] = []
    stale: list[EventPublisher] = []
    for step in range(plan.randint(2, 16)):
        if not opened or plan.random() < 0.3:
            opened.append(await plan.choice(hubs).open(session))
            owed.append([])
            continue
        index = plan.randrange(len(opened))
        text = f"step {step} by worker {index}"
        if not opened[index].emit(CallerTranscript, text=text):
            continue  # closed by its own hub's reopen
        await opened[index].flush()
        if index == len(opened) - 1:
            owed[index].append(text)
        else:
            stale.append(opened[index])
    return owed, stale


@pytest.mark.parametrize("seed", range(40))
async def test_a_worker_that_lost_the_call_never_writes_over_the_new_one(
    store: EventStore, tmp_path: Path, seed: int
) -> None:
    other = await _second_worker(store, tmp_path)
    hubs = [EventHub(store), EventHub(other)]
    session = f"takeover-{seed}"
    owed, stale = await _takeovers(hubs, session, random.Random(seed))
    events = await store.read(session)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    stored = [e.text for e in events if isinstance(e, CallerTranscript)]
    assert stored == [text for texts in owed for text in texts]
    assert all(p.fenced for p in stale)  # each was told, and stopped writing
    if other is not store:
        await other.close()


async def test_a_write_under_an_earlier_claim_is_refused_whole(store: EventStore) -> None:
    first = await store.claim("c")
    pub = EventPublisher("c", store=store, writer=first.writer, first_seq=first.next_seq)
    pub.emit(CallerTranscript, text="mine")
    await pub.flush()
    second = await store.claim("c")
    assert (first.next_seq, second.next_seq) == (1, 2)
    assert second.writer > first.writer
    late = EventPublisher("c", first_seq=2)  # events built here, written below
    late.emit(CallStarted, agent="stale", started_at=99.0)
    late.emit(CallerTranscript, text="stale")
    with pytest.raises(ConflictError, match="another worker took the call over"):
        await store.append(late.events, writer=first.writer)
    assert [e.text for e in await store.read("c")] == ["mine"]  # nothing of the batch
    assert [s.agent for s in await store.sessions()] != ["stale"]
    await store.append(late.events, writer=second.writer)
    assert [e.seq for e in await store.read("c")] == [1, 2, 3]
    (listed,) = await store.sessions()  # a claimed write lists its session as any write does
    assert (listed.session, listed.agent, listed.started_at, listed.events) == ("c", "stale", 99, 3)
    other = await store.claim("d")  # sessions are claimed apart
    assert (other.writer, other.next_seq) == (1, 1)
