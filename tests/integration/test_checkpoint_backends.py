"""What the contract cannot say for every backend: SQLite's durability settings, its safety
across processes and threads, Redis's native expiry, and the redis-server requirement."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.storage_support import redis_server as redis_support
from tests.storage_support.clock import FakeClock

from pipecat_steward.core.transactions import TransactionState
from pipecat_steward.storage.checkpoints import Identity, SQLiteCheckpointStore
from pipecat_steward.storage.checkpoints.redis_store import RedisCheckpointStore

ID = Identity("acme", "order_desk", "call-1")

WORKER = textwrap.dedent(
    """
    import sys
    from pipecat_steward.exceptions import ConflictError
    from pipecat_steward.storage.checkpoints import BlockingCheckpointStore, Identity, open_store

    identity = Identity("acme", "order_desk", "call-1")
    conflicts = 0
    with BlockingCheckpointStore(open_store(sys.argv[1])) as store:
        for _ in range(int(sys.argv[2])):
            while True:
                current = store.load(identity)
                try:
                    store.save(identity, {"count": current.payload["count"] + 1}, current.version)
                    break
                except ConflictError:
                    conflicts += 1
    print(conflicts)
    """
)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_support.redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


async def test_sqlite_commits_are_durable_wal_with_full_sync(tmp_path: Path) -> None:
    store = SQLiteCheckpointStore(tmp_path / "c.db")
    assert store.pragmas() == {"journal_mode": "wal", "synchronous": 2}  # 2 = FULL: fsync per commit
    await store.save(ID, "x", 0)
    await store.close()
    reopened = SQLiteCheckpointStore(tmp_path / "c.db")
    loaded = await reopened.load(ID)
    assert loaded is not None and loaded.payload == "x"
    await reopened.close()


def test_sqlite_version_check_holds_across_processes(tmp_path: Path) -> None:
    spec = f"sqlite:{tmp_path / 'shared.db'}"
    seed = SQLiteCheckpointStore(tmp_path / "shared.db")
    asyncio.run(seed.save(ID, {"count": 0}, 0))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, spec, "25"], stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0]
    final = asyncio.run(seed.load(ID))
    assert final is not None and final.payload == {"count": 100} and final.version == 101
    print(f"4 processes x 25 increments: {sum(int(o) for o in outs)} conflicts retried, none lost")
    asyncio.run(seed.close())


async def test_sqlite_work_runs_off_the_event_loop_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SQLiteCheckpointStore(tmp_path / "c.db")
    threads: list[int] = []
    original = store._save  # pyright: ignore[reportPrivateUsage]

    def spy(*args: object) -> int:
        threads.append(threading.get_ident())
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_save", spy)
    await store.save(ID, "x", 0)
    assert threads and threads[0] != threading.get_ident()
    await store.close()


async def test_sqlite_expired_rows_can_be_purged(tmp_path: Path) -> None:
    clock = FakeClock()
    store = SQLiteCheckpointStore(tmp_path / "c.db", ttl=10, clock=clock)
    await store.save(ID, "x", 0)
    await store.save(Identity("a", "b", "c"), "y", 0, ttl=1000)
    clock.advance(11)
    assert await store.purge_expired() == 1
    assert await store.list() == (Identity("a", "b", "c"),)
    await store.close()


async def test_redis_sets_a_native_expiry_so_abandoned_sessions_are_reclaimed(redis_url: str) -> None:
    store = RedisCheckpointStore(redis_url, ttl=30, prefix="native")
    await store.save(ID, "x", 0)
    pttl = await store.client.pttl("native:acme:order_desk:call-1")
    assert 25_000 < pttl <= 30_000
    forever = RedisCheckpointStore(redis_url, prefix="native2")
    await forever.save(ID, "x", 0)
    assert await forever.client.pttl("native2:acme:order_desk:call-1") == -1
    await store.close()
    await forever.close()


async def test_a_checkpoint_carries_session_and_transaction_state(redis_url: str, tmp_path: Path) -> None:
    txn = TransactionState()
    for store in (SQLiteCheckpointStore(tmp_path / "c.db"), RedisCheckpointStore(redis_url, prefix="both")):
        await store.save(ID, {"transaction": txn.to_dict(), "session": "{}"}, 0)
        loaded = await store.load(ID)
        assert loaded is not None and isinstance(loaded.payload, dict)
        assert TransactionState.from_dict(loaded.payload["transaction"]) == txn
        await store.close()


def test_a_missing_redis_server_fails_with_the_install_instruction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redis_support.shutil, "which", lambda _name: None)
    with pytest.raises(pytest.fail.Exception, match="run scripts/setup"):
        redis_support.redis_binary()
