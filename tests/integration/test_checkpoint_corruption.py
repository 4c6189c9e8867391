"""Restoring a checkpoint validates it: a corruption suite over SQLite and a real Redis.

A real checkpoint (the first half of a cancellation) is written, then mutated in the backend
itself, payload and row. Every mutation must end in one ``InvalidCheckpoint`` naming the
session, the store and the problem (policy ``fail``), or in a logged fresh start (policy
``fresh``): never a traceback, never a silent reset, never a session that restores and then
fails every turn.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis
from loguru import logger
from tests.storage_support.redis_server import redis_server

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.exceptions import StoreError
from pipecat_steward.runtime.checkpointing import Checkpointer, OnInvalid
from pipecat_steward.runtime.transactions import TransactionSession
from pipecat_steward.storage.checkpoints import (
    Identity,
    InvalidCheckpoint,
    SQLiteCheckpointStore,
    open_store,
)
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "bots" / "order_desk"
HALVES = ROOT / "tests" / "fixtures" / "order_desk_resume"
Json = dict[str, Any]


def _state(change: Callable[[Json], object]) -> Callable[[Json], object]:
    def mutate(p: Json) -> Json:
        state = json.loads(p["state"])
        change(state)
        return {**p, "state": json.dumps(state)}

    return mutate


def _txn(change: Callable[[Json], object]) -> Callable[[Json], object]:
    def mutate(p: Json) -> Json:
        txns = json.loads(p["transactions"])
        change(txns)
        return {**p, "transactions": json.dumps(txns)}

    return mutate


def _set(**values: Any) -> Callable[[Json], object]:
    return lambda p: {**p, **values}


def _drop(key: str) -> Callable[[Json], object]:
    return lambda p: {k: v for k, v in p.items() if k != key}


PAYLOAD_MUTATIONS: dict[str, Callable[[Json], object]] = {
    "list payload": lambda p: [],
    "empty object": lambda p: {},
    "no format_version": _drop("format_version"),
    "future format_version": _set(format_version=2),
    "format_version as text": _set(format_version="1"),
    "format_version as bool": _set(format_version=True),
    "no state": _drop("state"),
    "state not JSON": _set(state="{not json"),
    "state a list": _set(state="[]"),
    "turn as text": _state(lambda s: s.update(turn="x")),
    "variables a list": _state(lambda s: s.update(variables=[1, 2])),
    "retries as text": _state(lambda s: s.update(retries="x")),
    "negative turn": _state(lambda s: s.update(turn=-1)),
    "huge turn": _state(lambda s: s.update(turn=2**63 - 1)),
    "unknown slot status": _state(lambda s: s.update(slots={"a": {"status": "bogus"}})),
    "unknown state field": _state(lambda s: s.update(evil=1)),
    "no slots": _state(lambda s: s.pop("slots")),
    "payloads as text": _state(lambda s: s.update(pending_payloads="x")),
    "turns_done as text": _set(turns_done="3"),
    "negative turns_done": _set(turns_done=-5),
    "script a number": _set(script=7),
    "no transactions": _drop("transactions"),
    "transactions not JSON": _set(transactions="{"),
    "sequence as text": _txn(lambda t: t.update(sequence="x")),
    "unknown transaction status": _txn(lambda t: t["active_transaction"].update(status="DANCING")),
    "arguments a list": _txn(lambda t: t["active_transaction"].update(arguments=[1])),
    "evidence as text": _txn(lambda t: t["active_transaction"].update(evidence="x")),
    "interrupted an object": _txn(lambda t: t.update(interrupted={})),
    "unknown top-level key": _set(hack=1),
    "topic a number": _set(topic=5),
    "procedures as text": _set(procedures="x"),
}
ROW_MUTATIONS: dict[str, dict[str, Any]] = {
    "bad UTF-8": {"payload": b"\xff\xfe\xfd"},
    "payload not JSON": {"payload": b"not json"},
    "unknown kind": {"kind": "pickle"},
    "text kind": {"kind": "text"},
    "version 2**63-1": {"version": 2**63 - 1},
    "version 0": {"version": 0},
    "negative version": {"version": -3},
    "version as text": {"version": "abc"},
    "saved_at as text": {"saved_at": "yesterday"},
    "expires_at as text": {"expires_at": "never"},
}
CASES = [*(("payload", n) for n in PAYLOAD_MUTATIONS), *(("row", n) for n in ROW_MUTATIONS)]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


class Backend:
    """Writes a real checkpoint, then rewrites its stored fields behind the store's back."""

    def __init__(self, kind: str, tmp_path: Path, redis_url: str, session: str) -> None:
        self.kind = kind
        self.identity = Identity("acme", "order_desk", session)
        self.spec = f"sqlite:{tmp_path / 'calls.db'}" if kind == "sqlite" else redis_url
        self.path = tmp_path / "calls.db"
        self.redis_url = redis_url

    def write_real_checkpoint(self) -> Json:
        async def play() -> None:
            store = open_store(self.spec)
            try:
                checkpointer = Checkpointer(store, self.identity)
                await run_scenario_direct(
                    AGENT, load_scenario(HALVES / "part1.yaml"), checkpointer=checkpointer
                )
            finally:
                await store.close()

        asyncio.run(play())
        return json.loads(self.fields()["payload"])

    def fields(self) -> dict[str, Any]:
        if self.kind == "sqlite":
            with sqlite3.connect(self.path) as db:
                row = db.execute("SELECT payload, kind, version FROM checkpoints").fetchone()
            return {"payload": row[0], "kind": row[1], "version": row[2]}
        raw = self._redis().hgetall(self._key())
        return {k.decode(): v for k, v in raw.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType, reportAttributeAccessIssue]

    def rewrite(self, **values: Any) -> None:
        if self.kind == "sqlite":
            with sqlite3.connect(self.path) as db:
                sets = ", ".join(f"{k} = ?" for k in values)
                db.execute(f"UPDATE checkpoints SET {sets}", tuple(values.values()))
            return
        self._redis().hset(
            self._key(), mapping={k: str(v) if isinstance(v, int) else v for k, v in values.items()}
        )  # pyright: ignore[reportUnknownMemberType]

    def _redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis_url)

    def _key(self) -> str:
        ident = self.identity
        parts = (ident.tenant_id, ident.agent_id, ident.session_id)
        return ":".join(["steward:checkpoint", *(quote(p, safe="") for p in parts)])


def corrupt(backend: Backend, family: str, name: str) -> None:
    payload = backend.write_real_checkpoint()
    if family == "row":
        backend.rewrite(**ROW_MUTATIONS[name])
        return
    mutated = PAYLOAD_MUTATIONS[name](payload)
    backend.rewrite(payload=json.dumps(mutated).encode())


async def restore(backend: Backend, on_invalid: OnInvalid) -> tuple[TransactionSession, bool]:
    store = open_store(backend.spec)
    try:
        session = TransactionSession(
            load_agent(AGENT),
            checkpointer=Checkpointer(store, backend.identity, on_invalid=on_invalid),
        )
        return session, await session.restore()
    finally:
        await store.close()


def test_the_suite_is_large_enough() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("backend_kind", ["sqlite", "redis"])
@pytest.mark.parametrize(("family", "name"), CASES)
def test_a_corrupted_checkpoint_fails_with_one_clear_error(
    backend_kind: str, family: str, name: str, tmp_path: Path, redis_url: str
) -> None:
    backend = Backend(backend_kind, tmp_path, redis_url, f"{family}-{name}-{tmp_path.name}")
    corrupt(backend, family, name)
    with pytest.raises(InvalidCheckpoint) as caught:
        asyncio.run(restore(backend, "fail"))
    message = str(caught.value)
    assert backend.identity.scope in message
    assert (
        "SQLiteCheckpointStore" if backend_kind == "sqlite" else "RedisCheckpointStore"
    ) in message
    assert caught.value.problem and "\n" not in message


@pytest.mark.parametrize("backend_kind", ["sqlite", "redis"])
@pytest.mark.parametrize(("family", "name"), CASES[::4])
def test_policy_fresh_starts_afresh_with_a_warning(
    backend_kind: str, family: str, name: str, tmp_path: Path, redis_url: str
) -> None:
    backend = Backend(backend_kind, tmp_path, redis_url, f"fresh-{name}-{tmp_path.name}")
    corrupt(backend, family, name)
    warned: list[str] = []
    sink = logger.add(lambda m: warned.append(str(m)), level="WARNING")
    try:
        session, resumed = asyncio.run(restore(backend, "fresh"))
    finally:
        logger.remove(sink)
    assert resumed is False and session.tstate.active_transaction is None
    assert any("afresh" in w and backend.identity.scope in w for w in warned)

    async def save_again() -> int:
        store = open_store(backend.spec)
        try:
            checkpointer = Checkpointer(store, backend.identity, on_invalid="fresh")
            again = TransactionSession(load_agent(AGENT), checkpointer=checkpointer)
            assert await again.restore() is False
            await again.save()
            return checkpointer.version
        finally:
            await store.close()

    assert asyncio.run(save_again()) == 1


def test_an_untouched_checkpoint_still_restores(tmp_path: Path) -> None:
    backend = Backend("sqlite", tmp_path, "", "clean")
    backend.write_real_checkpoint()
    session, resumed = asyncio.run(restore(backend, "fail"))
    assert resumed and session.tstate.active_transaction is not None


def test_an_empty_database_file_is_an_error_not_a_fresh_call(tmp_path: Path) -> None:
    (tmp_path / "calls.db").write_bytes(b"")
    with pytest.raises(StoreError, match="empty"):
        SQLiteCheckpointStore(tmp_path / "calls.db")


def test_a_dropped_table_is_an_error_not_a_fresh_call(tmp_path: Path) -> None:
    backend = Backend("sqlite", tmp_path, "", "dropped")
    backend.write_real_checkpoint()
    with sqlite3.connect(backend.path) as db:
        db.execute("DROP TABLE checkpoints")
    with pytest.raises(StoreError, match="no checkpoints table"):
        SQLiteCheckpointStore(backend.path)


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("turn as text", "payload"),
        ("version 2**63-1", "row"),
        ("empty file", "file"),
        ("dropped table", "file"),
    ],
)
def test_the_cli_reports_a_bad_checkpoint_in_one_line(
    name: str, change: str, tmp_path: Path
) -> None:
    backend = Backend("sqlite", tmp_path, "", "s")
    if name == "empty file":
        backend.path.write_bytes(b"")
    else:
        corrupt(backend, change, name) if change != "file" else backend.write_real_checkpoint()
        if name == "dropped table":
            with sqlite3.connect(backend.path) as db:
                db.execute("DROP TABLE checkpoints")
    args = [
        sys.executable,
        "-m",
        "pipecat_steward.cli.main",
        "simulate",
        "--direct",
        "--store",
        backend.spec,
        "--tenant",
        "acme",
        "--session",
        "s",
        str(AGENT),
        str(HALVES / "part2.yaml"),
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("steward simulate: ") and done.stdout == ""
