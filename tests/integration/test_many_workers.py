"""Many workers per call: bot worker processes over one real redis-server, as a deployment runs.

A dispatcher (this test) assigns order-desk calls to three worker processes
(``tests/storage_support/worker.py``; each serves several calls at once, driving each with the
direct driver and a Redis ``Checkpointer`` by identity). It SIGKILLs workers mid-call, including
inside an executor, and hands every interrupted call to another worker, which resumes it by
identity. Across seeded rounds: every call ends as the uninterrupted run, no confirmed slot is
lost (every executor acts on the reference arguments), no irreversible effect is repeated for one
idempotency key (the backend's ledger, shared by all processes), keys never repeat between
calls, no call ever had a second writer, and each call's stored conversation events hold every
turn's caller words, as the uninterrupted call's do. A frozen worker (SIGSTOP) whose call was
taken over is fenced when it wakes: its next save conflicts, it fires nothing and writes nothing
more, and the event store refuses its conversation events, so each call's stored events stay one
sequence numbered 1..n.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.storage_support.redis_server import redis_server

from pipecat_steward.events.redis_store import RedisEventStore
from pipecat_steward.events.schema import Event as ConversationEvent
from pipecat_steward.storage.checkpoints import Identity, open_store

ROOT = Path(__file__).resolve().parents[2]
LATENCY = 0.1  # each irreversible executor sleeps this long before and after it acts
IRREVERSIBLE = {"cancel_order", "contest_charge"}
ROUNDS, CALLS = 3, 6
Event = dict[str, Any]


class Worker:
    """One worker process and the events it reported."""

    def __init__(self, name: str, url: str, ledger: Path, inbox: queue.Queue[Any]) -> None:
        env = {
            **os.environ,
            "STEWARD_ORDER_DESK_LEDGER": str(ledger),
            "STEWARD_ORDER_DESK_LATENCY": str(LATENCY),
        }
        self.name, self.events = name, list[Event]()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.storage_support.worker", url],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        threading.Thread(target=self._read, args=(inbox,), daemon=True).start()

    def _read(self, inbox: queue.Queue[Any]) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            inbox.put((self, json.loads(line)))
        inbox.put((self, {"event": "exit"}))

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def calls(self) -> set[str]:
        """Calls assigned here that did not end here."""
        ended = {e["session"] for e in self.events if e["event"] in ("done", "stopped")}
        return {e["session"] for e in self.events if e["event"] == "assigned"} - ended

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


class Dispatcher:
    """Assigns calls to workers and reads their reports."""

    def __init__(self, url: str, ledger: Path) -> None:
        self.url, self.ledger = url, ledger
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.workers: list[Worker] = []

    def start(self, n: int) -> list[Worker]:
        started = [
            Worker(f"w{len(self.workers) + i}", self.url, self.ledger, self.inbox) for i in range(n)
        ]
        self.workers += started
        ready = lambda w: any(e["event"] == "ready" for e in w.events)  # noqa: E731
        if not all(map(ready, started)):
            self.until(lambda *_: all(map(ready, started)))
        return started

    def assign(self, worker: Worker, session: str, pause: int = 0) -> None:
        worker.events.append({"event": "assigned", "session": session})
        worker.send(f"run {session} {pause}")

    def until(self, done: Callable[[Worker, Event], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            who, event = self.inbox.get(timeout=max(0.01, deadline - time.monotonic()))
            who.events.append(event)
            if done(who, event):
                return

    def finish(self, worker: Worker) -> None:
        worker.send("quit")
        self.until(lambda who, e: who is worker and e["event"] == "exit")
        assert worker.proc.wait(timeout=30) == 0

    def kill(self, worker: Worker) -> None:
        """SIGKILL the worker and read every report it wrote before it died."""
        worker.kill()
        self.until(lambda who, e: who is worker and e["event"] == "exit")

    def events(self, kind: str) -> list[tuple[Worker, Event]]:
        return [(w, e) for w in self.workers for e in w.events if e["event"] == kind]

    def close(self) -> None:
        for w in self.workers:
            w.close()


async def _stored(url: str, session: str) -> dict[str, Any]:
    store = open_store(url)
    try:
        checkpoint = await store.load(Identity("local", "order_desk", session))
        assert checkpoint is not None
        return {**checkpoint.payload, "version": checkpoint.version}  # type: ignore[dict-item]
    finally:
        await store.close()


def stored(url: str, session: str) -> dict[str, Any]:
    return asyncio.run(_stored(url, session))


async def _conversation(url: str, session: str) -> list[ConversationEvent]:
    store = RedisEventStore(url)
    try:
        return await store.read(session)
    finally:
        await store.close()


def conversation(url: str, session: str) -> list[ConversationEvent]:
    """The call's stored conversation events, numbered 1..n once each (else the test fails)."""
    events = asyncio.run(_conversation(url, session))
    assert [e.seq for e in events] == list(range(1, len(events) + 1)), (
        f"{session}: two workers numbered events alike: {[e.seq for e in events]}"
    )
    return events


def outcome(payload: dict[str, Any]) -> dict[str, Any]:
    """The business result of a finished call, free of identity-dependent keys."""
    txns = json.loads(payload["transactions"])
    last = txns["last_transaction"]
    return {
        "turns_done": payload["turns_done"],
        "status": txns["transaction_status"],
        "last": {k: last[k] for k in ("intent", "arguments", "status", "evidence")},
        "sequence": txns["sequence"],
        "state": payload["state"],
    }


def acts(d: Dispatcher, session: str) -> list[tuple[str, str]]:
    """The distinct executor calls of a call, in order: tool and arguments (key aside)."""
    seen: list[tuple[str, str]] = []
    for _, e in d.events("exec"):
        if e["session"] == session:
            args = {k: v for k, v in e["args"].items() if k != "idempotency_key"}
            step = (e["tool"], json.dumps(args, sort_keys=True))
            if step not in seen:
                seen.append(step)
    return seen


def heard(url: str, session: str) -> list[str]:
    """The caller's words in the call's stored events, each turn once.

    A turn a kill cut short is played again by the worker that resumes the call, so its words
    can be stored twice in a row; a turn whose events were lost with a killed worker is missing.
    """
    said = [e.text for e in conversation(url, session) if e.kind == "caller_transcript"]
    return [text for i, text in enumerate(said) if i == 0 or said[i - 1] != text]


def reference(d: Dispatcher) -> tuple[dict[str, Any], list[tuple[str, str]], list[str]]:
    """The uninterrupted run of one call on a worker of its own."""
    (w,) = d.start(1)
    d.assign(w, "reference")
    d.finish(w)
    return outcome(stored(d.url, "reference")), acts(d, "reference"), heard(d.url, "reference")


def in_executor(worker: Worker) -> bool:
    """True when one of the worker's calls entered an irreversible executor and reported no
    turn after it (the kill landed inside the executor)."""
    last: dict[str, str] = {}
    for e in worker.events:
        if e["event"] in ("exec", "turn"):
            last[e["session"]] = "exec" if e.get("tool") in IRREVERSIBLE else "turn"
    return "exec" in last.values()


def kill_round(d: Dispatcher, number: int, rng: random.Random) -> dict[str, int]:
    """Three workers share six calls; one is killed inside an executor, its calls go to the
    second, which is killed at a random turn; the third finishes every interrupted call."""
    first, second, third = d.start(3)
    sessions = [f"r{number}-c{i}" for i in range(CALLS)]
    for i, session in enumerate(sessions):
        d.assign((first, second, third)[i % 3], session)
    target = rng.randint(1, 2)
    d.until(
        lambda w, e: (
            w is first
            and e["event"] == "exec"
            and e["tool"] in IRREVERSIBLE
            and sum(x.get("tool") in IRREVERSIBLE for x in first.events) >= target
        )
    )
    time.sleep(rng.uniform(0, 1.5 * LATENCY))
    d.kill(first)
    mid_executor = in_executor(first)
    orphans = first.calls()
    for session in sorted(orphans):
        d.assign(second, session)
    turns = len([e for e in second.events if e["event"] == "turn"]) + rng.randint(2, 10)
    d.until(
        lambda w, e: (
            w is second
            and (len([x for x in w.events if x["event"] == "turn"]) >= turns or not w.calls())
        )
    )
    time.sleep(rng.uniform(0, LATENCY))
    d.kill(second)
    mid_executor += in_executor(second)
    for session in sorted(second.calls()):
        d.assign(third, session)
    d.finish(third)
    return {
        "calls": CALLS,
        "kills": 2,
        "mid_executor": mid_executor,
        "resumed": len(orphans) + len(second.calls()),
    }


def check_last_writer(final: dict[str, Any], end: Event) -> None:
    """Nobody wrote the call after the worker that finished it, and its write is the last.

    A worker killed after its call's final save but before it reported ``done`` leaves a
    finished checkpoint: the worker that resumes the call has nothing left to play and writes
    nothing (``saves`` 0), so the last write is the killed worker's, at the version it loaded.
    """
    assert final["version"] == end["version"], "a write landed after the finishing worker's"
    if end["saves"]:
        assert final["writer"] == end["writer"], "the last write is the finishing worker's"


def check_calls(
    d: Dispatcher, sessions: list[str], want: dict[str, Any], steps: list[Any], words: list[str]
) -> None:
    for session in sessions:
        ends = [(w, e) for w, e in d.events("done") if e["session"] == session]
        assert len(ends) == 1, f"{session} must end exactly once, on one worker: {ends}"
        final = stored(d.url, session)
        assert outcome(final) == want, f"{session} ended differently from the uninterrupted run"
        check_last_writer(final, ends[0][1])
        assert acts(d, session) == steps, f"{session} acted on other arguments than confirmed"
        assert conversation(d.url, session)[-1].kind == "call_ended"
        # Events are stored before each checkpoint: no turn's events die with a killed worker.
        assert heard(d.url, session) == words, f"{session}: the stored events lost a turn"


def check_ledger(d: Dispatcher, calls: int, interrupted: int) -> None:
    book = json.loads(d.ledger.read_text())
    effects = Counter(e["key"] for e in book["effects"])
    assert max(effects.values()) == 1, "an irreversible effect was repeated for one key"
    assert len(effects) == calls * len(IRREVERSIBLE), "every call acted once per transaction"
    owners: dict[str, set[str]] = {}
    for _, e in d.events("exec"):
        owners.setdefault(e["args"]["idempotency_key"], set()).add(e["session"])
    assert all(len(s) == 1 for s in owners.values()), "two calls shared an idempotency key"
    replays = sum(n - 1 for n in Counter(book["attempts"]).values())
    # A key is replayed only for a call a kill cut between its executor and the checkpoint.
    assert replays <= interrupted, (replays, interrupted)


def test_workers_killed_mid_call_hand_every_call_to_another_worker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(20261201)
    totals: Counter[str] = Counter()
    with redis_server(tmp_path) as url:
        d = Dispatcher(url, tmp_path / "ledger.json")
        try:
            want, steps, words = reference(d)
            assert [tool for tool, _ in steps] == ["cancel_order", "contest_charge", "track_order"]
            for number in range(ROUNDS):
                totals.update(kill_round(d, number, rng))
            sessions = [f"r{n}-c{i}" for n in range(ROUNDS) for i in range(CALLS)]
            check_calls(d, sessions, want, steps, words)
            check_ledger(d, len(sessions) + 1, totals["resumed"])
            assert not d.events("conflict"), "no call ever had two live writers"
        finally:
            d.close()
    with capsys.disabled():
        print(
            f"\n[many-workers redis] {ROUNDS} rounds of 3 workers and {CALLS} calls: "
            f"{totals['kills']} SIGKILLs ({totals['mid_executor']} inside an executor), "
            f"{totals['resumed']} calls resumed on another worker; every call ended as the "
            "uninterrupted run, no effect repeated, no key shared, no second writer"
        )
    assert totals["resumed"] >= ROUNDS and totals["mid_executor"] >= 1, totals


def test_a_frozen_worker_is_fenced_when_it_wakes(tmp_path: Path) -> None:
    with redis_server(tmp_path) as url:
        d = Dispatcher(url, tmp_path / "ledger.json")
        try:
            want, steps, _ = reference(d)
            zombie, taker = d.start(2)
            d.assign(zombie, "other")  # a call of the frozen worker nobody takes over
            d.assign(zombie, "z", pause=2)  # freezes once the cancellation awaits its "yes"
            d.until(
                lambda w, e: (
                    w is zombie and e["event"] == "turn" and e["session"] == "z" and e["turn"] == 2
                )
            )
            _, status = os.waitpid(zombie.proc.pid, os.WUNTRACED)
            assert os.WIFSTOPPED(status)
            frozen_at = stored(url, "z")["version"]
            d.assign(taker, "z")
            d.finish(taker)
            taken = stored(url, "z")
            seen = len(zombie.events)
            zombie.proc.send_signal(signal.SIGCONT)
            d.finish(zombie)
            woke = [e for e in zombie.events[seen:] if e.get("session") == "z"]
            assert [e["event"] for e in woke] == ["conflict", "stopped"], woke
            assert woke[0]["message"]["type"] == "steward_conflict"
            assert woke[1]["version"] == frozen_at, "the zombie wrote nothing after waking"
            assert woke[1]["fenced"] is True, "the event store refused the zombie's events"
            ends = [e for e in conversation(url, "z") if e.kind == "call_ended"]
            assert [getattr(e, "status", None) for e in ends] == ["done"], ends
            assert stored(url, "z") == taken and outcome(taken) == want
            assert outcome(stored(url, "other")) == want, "its other call was not disturbed"
            assert acts(d, "z") == steps
            z_keys = {
                e["args"]["idempotency_key"] for w, e in d.events("exec") if e["session"] == "z"
            }
            assert all(w is taker for w, e in d.events("exec") if e["session"] == "z")
            attempts = Counter(json.loads(d.ledger.read_text())["attempts"])
            assert all(attempts[k] == 1 for k in z_keys if k in attempts)
            check_ledger(d, 3, interrupted=0)
        finally:
            d.close()


def test_a_call_handed_over_after_its_last_save_ends_without_a_write(tmp_path: Path) -> None:
    """A worker killed between its call's final save and its ``done`` report: the dispatcher
    hands the finished call to another worker, which ends it without writing it again."""
    with redis_server(tmp_path) as url:
        d = Dispatcher(url, tmp_path / "ledger.json")
        try:
            want, _, _ = reference(d)  # the first worker saved the whole call
            before = stored(url, "reference")
            (second,) = d.start(1)
            d.assign(second, "reference")
            d.finish(second)
            (_, first_end), (_, end) = d.events("done")
            assert end["saves"] == 0 and end["version"] == before["version"]
            final = stored(url, "reference")
            assert final == before and outcome(final) == want
            assert final["writer"] == first_end["writer"] != end["writer"]
            check_last_writer(final, end)
            assert conversation(url, "reference")[-1].kind == "call_ended"
            assert not d.events("conflict")
        finally:
            d.close()
