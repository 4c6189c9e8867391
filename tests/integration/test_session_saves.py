"""Saves of one session are serialised (one writer, ordered, coalesced) on every path.

A turn-boundary save and the save after an executor returns must never race each other, so a
worker never conflicts with itself, whatever the executor's or the backend's latency; SQLite
and a real Redis, the Pipecat cascade, speech-to-speech, the direct driver and the CLI.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import asyncio
import json
import os
import random
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.storage_support.redis_server import redis_server

from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.storage.checkpoints import (
    Checkpoint,
    CheckpointStore,
    Identity,
    Payload,
    open_store,
)
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import check_expectations, load_scenario
from pipecat_steward.testing.simulate import run_scenario
from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "bots" / "order_desk"
SCENARIOS = AGENT / "scenarios"
HALVES = ROOT / "tests" / "fixtures" / "order_desk_resume"
ID = Identity("acme", "order_desk", "call-7")
Runner = Callable[..., Awaitable[list[dict[str, Any]]]]
PATHS: dict[str, Runner] = {
    "pipeline": run_scenario,
    "direct": run_scenario_direct,
    "s2s": run_scenario_s2s,
}


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def spec_for(backend: str, tmp_path: Path, redis_url: str) -> str:
    return f"sqlite:{tmp_path / 'calls.db'}" if backend == "sqlite" else redis_url


class SlowStore:
    """A real store behind a network-like delay on every operation (random, seeded)."""

    def __init__(self, inner: CheckpointStore, most: float, seed: int) -> None:
        self.inner, self.most, self.rng = inner, most, random.Random(seed)

    async def _lag(self) -> None:
        await asyncio.sleep(self.rng.uniform(0, self.most))

    async def load(self, identity: Identity) -> Checkpoint | None:
        await self._lag()
        return await self.inner.load(identity)

    async def save(
        self,
        identity: Identity,
        payload: Payload,
        expected_version: int,
        *,
        ttl: float | None = None,
    ) -> int:
        await self._lag()
        return await self.inner.save(identity, payload, expected_version, ttl=ttl)

    async def list(
        self, tenant_id: str | None = None, agent_id: str | None = None
    ) -> tuple[Identity, ...]:
        return await self.inner.list(tenant_id, agent_id)

    async def delete(self, identity: Identity) -> bool:
        return await self.inner.delete(identity)

    async def close(self) -> None:
        await self.inner.close()


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
@pytest.mark.parametrize("seed", range(4))
async def test_concurrent_saves_of_one_session_are_ordered_and_coalesced(
    backend: str, seed: int, tmp_path: Path, redis_url: str
) -> None:
    store = SlowStore(open_store(spec_for(backend, tmp_path, redis_url)), 0.03, seed)
    checkpointer = Checkpointer(store, Identity("acme", "saves", f"s{seed}"))
    rng = random.Random(seed)

    asked: list[int] = []

    async def later(n: int) -> int:
        await asyncio.sleep(rng.uniform(0, 0.1))
        asked.append(n)
        return await checkpointer.save({"n": n})

    try:
        versions = await asyncio.gather(*(later(n) for n in range(30)))
        stored = await store.inner.load(checkpointer.identity)
    finally:
        await store.close()
    assert checkpointer.conflict is None
    assert stored is not None and stored.version == checkpointer.version
    assert stored.payload == {"n": asked[-1], "writer": checkpointer.writer}, "the newest is stored"
    in_order = [versions[n] for n in asked]
    assert in_order == sorted(in_order), "a later request never returns an older version"
    assert checkpointer.saves + checkpointer.coalesced == 30
    assert checkpointer.saves == stored.version and checkpointer.coalesced > 0


async def play(
    runner: Runner, spec: str, scenario: Path, session: str, lag: float = 0.0
) -> list[dict[str, Any]]:
    store = SlowStore(open_store(spec), lag, len(session))
    try:
        loaded = load_scenario(scenario)
        identity = Identity("acme", "order_desk", session)
        traces = await runner(AGENT, loaded, checkpointer=Checkpointer(store, identity))
        played = loaded.turns[len(loaded.turns) - len(traces) :]
        problems = [
            p
            for t, turn in zip(traces, played, strict=True)
            for p in check_expectations(t, turn.checks)
        ]
        assert problems == []
        return traces
    finally:
        await store.close()


BACKEND_LAG = 0.1
"""Up to this many seconds more on every store operation, so saves overlap as on a slow network."""
SWEEP = [
    *[("pipeline", latency) for latency in (0.0, 0.05, 0.2, 0.5, 1.0, 2.0)],
    *[("s2s", latency) for latency in (0.05, 0.5, 2.0)],
    *[("direct", latency) for latency in (0.2, 2.0)],
]


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
@pytest.mark.parametrize(("path", "latency"), SWEEP)
async def test_a_worker_never_conflicts_with_itself(
    path: str,
    latency: float,
    backend: str,
    tmp_path: Path,
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STEWARD_ORDER_DESK_LATENCY", str(latency))
    ledger = tmp_path / "ledger.json"
    monkeypatch.setenv("STEWARD_ORDER_DESK_LEDGER", str(ledger))
    spec, name = spec_for(backend, tmp_path, redis_url), tmp_path.name
    traces = await play(PATHS[path], spec, SCENARIOS / "long_session.yaml", name, BACKEND_LAG)
    assert traces[-1]["transaction"]["status"] == "COMPLETED"
    assert [e["tool"] for e in json.loads(ledger.read_text())["effects"]] == [
        "cancel_order",
        "contest_charge",
    ]
    assert await play(PATHS[path], spec, SCENARIOS / "long_session.yaml", name) == []  # all saved


def test_the_cli_long_session_on_sqlite_with_a_slow_backend(tmp_path: Path) -> None:
    env = {**os.environ, "STEWARD_ORDER_DESK_LATENCY": "0.2"}
    args = [
        sys.executable,
        "-m",
        "pipecat_steward.cli.main",
        "simulate",
        "--store",
        f"sqlite:{tmp_path / 'calls.db'}",
        "--session",
        "s",
        str(AGENT),
        str(SCENARIOS / "long_session.yaml"),
        "--json",
    ]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    traces = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert traces and traces[-1]["transaction"]["status"] == "COMPLETED"


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
async def test_speech_to_speech_resumes_a_call_on_another_worker(
    backend: str, tmp_path: Path, redis_url: str
) -> None:
    spec = spec_for(backend, tmp_path, redis_url)
    first = await play(run_scenario_s2s, spec, HALVES / "part1.yaml", tmp_path.name)
    assert first[-1]["transaction"]["status"] == "AWAITING_CONFIRMATION"
    second = await play(run_scenario_s2s, spec, HALVES / "part2.yaml", tmp_path.name)
    assert second[0]["transaction"]["status"] == "COMPLETED"
    assert await play(run_scenario_s2s, spec, HALVES / "part2.yaml", tmp_path.name) == []


async def test_speech_to_speech_saves_at_the_turn_boundary_itself(tmp_path: Path) -> None:
    from pipecat_steward.agent.loader import load_agent
    from pipecat_steward.testing.script import Call
    from pipecat_steward.testing.simulate_s2s import realtime_run

    store = open_store(f"sqlite:{tmp_path / 'calls.db'}")
    checkpointer = Checkpointer(store, ID)
    try:
        async with realtime_run(load_agent(AGENT), checkpointer=checkpointer) as run:
            start = Call("start_retail_order_cancel", {"quote": "cancel my order"})
            await run.turn("I want to cancel my order", [[start]])
            saved = await store.load(ID)
    finally:
        await store.close()
    assert saved is not None, "no executor ran: only the turn-boundary save can have written"
    assert isinstance(saved.payload, dict)
    assert "retail_order_cancel" in str(saved.payload["transactions"])
