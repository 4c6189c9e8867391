"""Crash and resume: an order_desk conversation in a subprocess is killed with SIGKILL at
seeded random points; each time a new process resumes the same identity from the checkpoint
store and finishes. Across all runs: no confirmed parameter is lost, no executor acts twice for
one idempotency key, and every run ends in the state of the uninterrupted run. Once with SQLite,
once with a real redis-server."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.storage_support.redis_server import redis_server

from pipecat_steward.storage.checkpoints import Identity, open_store
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "bots" / "order_desk"
SCENARIO = AGENT / "scenarios" / "long_session.yaml"
KILLS = 50
LATENCY = "0.01"


def command(store: str, session: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pipecat_steward.cli.main",
        "simulate",
        "--direct",
        "--json",
        "--store",
        store,
        "--session",
        session,
        str(AGENT),
        str(SCENARIO),
    ]


def env(ledger: Path) -> dict[str, str]:
    return {
        **os.environ,
        "STEWARD_ORDER_DESK_LEDGER": str(ledger),
        "STEWARD_ORDER_DESK_LATENCY": LATENCY,
    }


def run_until_killed(store: str, session: str, ledger: Path, rng: random.Random) -> bool:
    """Start the conversation and SIGKILL it after a random number of turns plus a random
    delay; True when the kill landed before the run finished."""
    proc = subprocess.Popen(
        command(store, session), env=env(ledger), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdout is not None
    for _ in range(rng.randint(0, 7)):
        if not proc.stdout.readline():
            break
    time.sleep(rng.uniform(0, 0.06))
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    return killed and proc.returncode == -signal.SIGKILL


def finish(store: str, session: str, ledger: Path) -> None:
    done = subprocess.run(
        command(store, session), env=env(ledger), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]


def outcome(payload: dict[str, Any]) -> dict[str, Any]:
    """The business result of a finished conversation, free of identity-dependent keys."""
    txns = json.loads(payload["transactions"])
    last = txns["last_transaction"]
    return {
        "turns_done": payload["turns_done"],
        "status": txns["transaction_status"],
        "last": {k: last[k] for k in ("intent", "arguments", "status")},
        "result": last["evidence"]["result"],
        "reported": last["evidence"]["reported"],
        "sequence": txns["sequence"],
    }


async def saved(store: str, session: str) -> dict[str, Any]:
    backend = open_store(store)
    try:
        checkpoint = await backend.load(Identity("local", "order_desk", session))
        assert checkpoint is not None
        return dict(checkpoint.payload)  # type: ignore[arg-type]
    finally:
        await backend.close()


def reference(tmp_path: Path) -> tuple[dict[str, Any], list[str]]:
    ledger = tmp_path / "reference.json"
    store = f"sqlite:{tmp_path / 'reference.sqlite'}"
    finish(store, "reference", ledger)
    book = json.loads(ledger.read_text())
    assert len(book["attempts"]) == len(set(book["attempts"])), "no crash: every key is called once"
    return outcome(asyncio.run(saved(store, "reference"))), [e["tool"] for e in book["effects"]]


def crash_campaign(store: str, tmp_path: Path, seed: int) -> dict[str, int]:
    want, want_effects = reference(tmp_path)
    rng = random.Random(seed)
    kills = chains = executions = replays = 0
    while kills < KILLS:
        chains += 1
        session, ledger = f"crash-{chains}", tmp_path / f"ledger-{chains}.json"
        landed = sum(
            run_until_killed(store, session, ledger, rng) for _ in range(rng.randint(1, 4))
        )
        finish(store, session, ledger)
        book = json.loads(ledger.read_text())
        keys = Counter(e["key"] for e in book["effects"])
        assert max(keys.values(), default=1) == 1, f"an executor acted twice for one key: {keys}"
        assert [e["tool"] for e in book["effects"]] == want_effects
        assert outcome(asyncio.run(saved(store, session))) == want, "resumed run ended differently"
        # The runtime calls an executor again only when a kill cut between the call and the
        # checkpoint of its result (then the backend answers from its record): at most once per kill.
        repeated = sum(n - 1 for n in Counter(book["attempts"]).values())
        assert repeated <= landed
        kills, executions, replays = (
            kills + landed,
            executions + len(book["effects"]),
            replays + repeated,
        )
    return {"kills": kills, "chains": chains, "effects": executions, "replays": replays}


def report(capsys: pytest.CaptureFixture[str], backend: str, counts: dict[str, int]) -> None:
    with capsys.disabled():
        print(
            f"\n[crash-resume {backend}] {counts['kills']} SIGKILLs over {counts['chains']} conversations; "
            f"{counts['effects']} backend effects, none repeated; {counts['replays']} executor calls replayed "
            "after a kill between call and checkpoint, answered from the backend's record; "
            "every conversation ended as the uninterrupted run"
        )


def test_reference_run_matches_the_scenario(tmp_path: Path) -> None:
    traces = asyncio.run(run_scenario_direct(AGENT, load_scenario(SCENARIO)))
    assert [t["transaction"]["status"] for t in traces][-1] == "COMPLETED"
    want, effects = reference(tmp_path)
    assert effects == ["cancel_order", "contest_charge"] and want["turns_done"] == 8


@pytest.mark.slow
def test_sigkill_sqlite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts = crash_campaign(f"sqlite:{tmp_path / 'checkpoints.sqlite'}", tmp_path, seed=20261129)
    report(capsys, "sqlite", counts)
    assert counts["kills"] >= KILLS


@pytest.mark.slow
def test_sigkill_redis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with redis_server(tmp_path) as url:
        counts = crash_campaign(url, tmp_path, seed=4004)
    report(capsys, "redis", counts)
    assert counts["kills"] >= KILLS
