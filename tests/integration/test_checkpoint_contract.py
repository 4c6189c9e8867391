"""The checkpoint-store contract, one suite run against every backend: memory, SQLite and a real
redis-server (started on 127.0.0.1 at a free port for this module, no persistence)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from tests.storage_support.clock import FakeClock
from tests.storage_support.redis_server import redis_server

from pipecat_steward.exceptions import ConflictError, StoreError
from pipecat_steward.storage.checkpoints import (
    BlockingCheckpointStore,
    CheckpointStore,
    Identity,
    MemoryCheckpointStore,
    SQLiteCheckpointStore,
    VersionConflict,
    open_store,
)
from pipecat_steward.storage.checkpoints.redis_store import RedisCheckpointStore

BACKENDS = ["memory", "sqlite", "redis"]
ID = Identity("acme", "order_desk", "call-1")
Factory = Callable[..., CheckpointStore]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make(backend_name: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Factory]:
    """Build stores of one backend that share storage (another worker = another call)."""
    opened: list[CheckpointStore] = []
    shared_memory: dict[str, MemoryCheckpointStore] = {}
    prefix = f"test:{uuid.uuid4().hex}"

    def factory(*, clock: FakeClock | None = None, ttl: float | None = None) -> CheckpointStore:
        clock = clock or FakeClock()
        store: CheckpointStore
        if backend_name == "memory":
            store = shared_memory.setdefault("one", MemoryCheckpointStore(ttl=ttl, clock=clock))
        elif backend_name == "sqlite":
            store = SQLiteCheckpointStore(tmp_path / "checkpoints.db", ttl=ttl, clock=clock)
        else:
            url = request.getfixturevalue("redis_url")
            store = RedisCheckpointStore(url, ttl=ttl, clock=clock, prefix=prefix)
        opened.append(store)
        return store

    yield factory
    for store in {id(s): s for s in opened}.values():
        await store.close()


async def test_a_missing_checkpoint_loads_as_none(make: Factory) -> None:
    assert await make().load(ID) is None


@pytest.mark.parametrize("payload", ['{"turn": 3}', b"\x00\xffbinary", {"session": {"turn": 3}, "é": [1, 2.5, None]}])
async def test_save_then_load_round_trips_the_payload_and_its_type(make: Factory, payload: object) -> None:
    store = make()
    assert await store.save(ID, payload, 0) == 1  # type: ignore[arg-type]
    loaded = await store.load(ID)
    assert loaded is not None
    assert (loaded.identity, loaded.version, loaded.payload) == (ID, 1, payload)
    assert type(loaded.payload) is type(payload)


async def test_each_save_bumps_the_version(make: Factory) -> None:
    store = make()
    versions = [await store.save(ID, f"turn {n}", n) for n in range(5)]
    assert versions == [1, 2, 3, 4, 5]
    loaded = await store.load(ID)
    assert loaded is not None and (loaded.version, loaded.payload) == (5, "turn 4")


async def test_a_stale_writer_gets_a_clear_conflict_and_changes_nothing(make: Factory) -> None:
    worker_a, worker_b = make(), make()
    await worker_a.save(ID, "v1", 0)
    seen_a, seen_b = await worker_a.load(ID), await worker_b.load(ID)
    assert seen_a is not None and seen_b is not None
    await worker_a.save(ID, "a wins", seen_a.version)
    with pytest.raises(ConflictError) as info:
        await worker_b.save(ID, "b loses", seen_b.version)
    error = info.value
    assert isinstance(error, VersionConflict) and (error.expected, error.current) == (1, 2)
    assert "acme/order_desk/call-1 is at version 2" in str(error)
    assert "expected_version=2" in str(error)
    loaded = await worker_b.load(ID)
    assert loaded is not None and (loaded.version, loaded.payload) == (2, "a wins")


async def test_creating_over_an_existing_checkpoint_conflicts(make: Factory) -> None:
    store = make()
    await store.save(ID, "first", 0)
    with pytest.raises(VersionConflict, match="expected version 0"):
        await store.save(ID, "second", 0)
    with pytest.raises(VersionConflict, match="at version 0"):
        await store.save(Identity("acme", "order_desk", "new"), "x", 3)


async def test_concurrent_read_modify_write_loses_no_update(make: Factory) -> None:
    await make().save(ID, {"count": 0}, 0)

    async def increment(store: CheckpointStore) -> int:
        conflicts = 0
        while True:
            current = await store.load(ID)
            assert current is not None and isinstance(current.payload, dict)
            try:
                await store.save(ID, {"count": current.payload["count"] + 1}, current.version)
                return conflicts
            except ConflictError:
                conflicts += 1

    workers = [make() for _ in range(4)]
    await asyncio.gather(*(increment(workers[n % 4]) for n in range(20)))
    final = await workers[0].load(ID)
    assert final is not None and final.payload == {"count": 20} and final.version == 21


async def test_list_filters_by_tenant_and_agent_in_order(make: Factory) -> None:
    store = make()
    ids = [
        Identity("t2", "a", "s1"),
        Identity("t1", "b", "s1"),
        Identity("t1", "a", "s2"),
        Identity("t1", "a", "s1"),
        Identity("t:*[x]/%", "a b", "s:1"),
    ]
    for identity in ids:
        await store.save(identity, "x", 0)
    assert await store.list() == tuple(sorted(ids))
    assert await store.list("t1") == (ids[3], ids[2], ids[1])
    assert await store.list("t1", "a") == (ids[3], ids[2])
    assert await store.list(agent_id="a") == (ids[3], ids[2], ids[0])
    assert await store.list("t:*[x]/%") == (ids[4],)
    assert await store.list("nobody") == ()


async def test_identities_are_separate_per_tenant_and_agent(make: Factory) -> None:
    store = make()
    await store.save(Identity("t1", "a", "s"), "one", 0)
    await store.save(Identity("t2", "a", "s"), "two", 0)
    await store.save(Identity("t1", "b", "s"), "three", 0)
    loaded = await store.load(Identity("t2", "a", "s"))
    assert loaded is not None and loaded.payload == "two"


async def test_delete_removes_and_a_new_conversation_starts_at_version_one(make: Factory) -> None:
    store = make()
    await store.save(ID, "x", 0)
    await store.save(ID, "y", 1)
    assert await store.delete(ID) is True
    assert await store.delete(ID) is False
    assert await store.load(ID) is None and await store.list() == ()
    assert await store.save(ID, "again", 0) == 1


async def test_a_store_ttl_expires_checkpoints_on_the_injected_clock(make: Factory) -> None:
    clock = FakeClock()
    store = make(clock=clock, ttl=60)
    await store.save(ID, "x", 0)
    loaded = await store.load(ID)
    assert loaded is not None and loaded.expires_at == clock.now + 60
    clock.advance(59.5)
    assert await store.load(ID) is not None
    clock.advance(1)
    assert await store.load(ID) is None
    assert await store.list() == ()
    assert await store.delete(ID) is False
    with pytest.raises(VersionConflict):  # the stale writer's version is gone with it
        await store.save(ID, "late", 1)
    assert await store.save(ID, "fresh", 0) == 1


async def test_a_save_ttl_overrides_the_default_and_no_ttl_never_expires(make: Factory) -> None:
    clock = FakeClock()
    store = make(clock=clock, ttl=60)
    short, forever = Identity("t", "a", "short"), Identity("t", "a", "forever")
    await store.save(short, "x", 0, ttl=5)
    await store.save(ID, "x", 0, ttl=3600)
    clock.advance(10)
    assert await store.load(short) is None
    assert await store.load(ID) is not None
    plain = make(clock=clock)
    if plain is not store:
        await plain.save(forever, "x", 0)
        clock.advance(10**7)
        assert await plain.load(forever) is not None


async def test_bad_inputs_are_refused_with_a_fix(make: Factory) -> None:
    store = make()
    with pytest.raises(StoreError, match="expected_version must be an int >= 0"):
        await store.save(ID, "x", -1)
    with pytest.raises(StoreError, match="str, bytes or a JSON dict"):
        await store.save(ID, [1, 2], 0)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="not JSON-serialisable"):
        await store.save(ID, {"x": object()}, 0)
    with pytest.raises(StoreError, match="ttl must be positive"):
        await store.save(ID, "x", 0, ttl=0)
    with pytest.raises(StoreError, match="Identity.session_id must be a non-empty string"):
        Identity("t", "a", "")
    assert await store.load(ID) is None


def test_the_blocking_wrapper_drives_every_backend(backend_name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    spec = {"memory": "memory:", "sqlite": f"sqlite:{tmp_path / 'c.db'}"}.get(backend_name)
    spec = spec or request.getfixturevalue("redis_url")
    with BlockingCheckpointStore(open_store(spec)) as store:
        identity = Identity("blocking", "a", uuid.uuid4().hex)
        assert store.save(identity, {"n": 1}, 0) == 1
        loaded = store.load(identity)
        assert loaded is not None and loaded.payload == {"n": 1}
        assert identity in store.list("blocking")
        assert store.delete(identity) is True


def test_open_store_names_the_forms_it_knows() -> None:
    with pytest.raises(StoreError, match=r"use memory:, sqlite:PATH or redis://"):
        open_store("postgres://x")
