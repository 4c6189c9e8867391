"""A call's events are stored before each checkpoint, on every path that drives a call.

A worker killed right after a checkpoint is resumed from it by another worker, which goes on
from the next turn. The events of the turns that checkpoint holds are written by the killed
worker only: whatever of them it had not stored yet would be missing from the call's log for
good. So every event the session's progress produced is stored before the checkpoint of that
progress is written.

The test reads the stored events (a real ``redis-server``; the checkpoints are in a second one)
at the moment each turn's checkpoint is written, as a worker killed there would leave them, and
compares them with the call's whole log: every event before the turn's end (its ``turn_ended``)
must be there already. The events a checkpoint itself produces (``checkpoint``, and the
``turn_ended`` that follows it) are stored with the next one, and ``call_ended`` when the call
ends; what happens between two turns (a variable the app sets) belongs to the next turn.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis
from tests.storage_support.redis_server import redis_server

from pipecat_steward.events import EventHub
from pipecat_steward.events.redis_store import RedisEventStore
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.storage.checkpoints import Identity, open_store
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import load_scenario
from pipecat_steward.testing.simulate import run_scenario
from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

ROOT = Path(__file__).resolve().parents[2]
CALLS = [
    ("order_desk", "long_session.yaml"),
    ("clinic", "appointment_to_payment.yaml"),
    ("bella_notte", "happy_path.yaml"),
]
AFTER_CHECKPOINT = {"checkpoint", "turn_ended"}  # produced by the checkpoint: stored with the next
PAUSE_MS = 100  # the events' writes held after each checkpoint (``STORE_WAIT_S`` is far longer)
PATHS: dict[str, Callable[..., Any]] = {
    "direct": run_scenario_direct,
    "pipeline": run_scenario,
    "speech_to_speech": run_scenario_s2s,
}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Two redis-servers: the events' and the checkpoints'."""
    with (
        redis_server(tmp_path_factory.mktemp("events")) as events,
        redis_server(tmp_path_factory.mktemp("checkpoints")) as checkpoints,
    ):
        yield events, checkpoints


def stored(url: str, session: str) -> list[dict[str, Any]]:
    """The session's events in the store right now, read as another process would.

    Then the events' server holds every write for a while (``CLIENT PAUSE``, reads go on): the
    next turn's events reach the store late, as from a busy or distant Redis, and only a
    checkpoint that waits for them finds them stored.
    """
    client = redis.Redis.from_url(url)
    try:
        entries = client.xrange(f"steward:events:{quote(session, safe='')}")
        client.execute_command("CLIENT", "PAUSE", str(PAUSE_MS), "WRITE")
    finally:
        client.close()
    return [json.loads(fields[b"data"]) for _, fields in entries]


async def play(path: str, bot: str, scenario: str, urls: tuple[str, str]) -> tuple[Any, Any]:
    """Play the call; return the stored events at each checkpoint, and the whole log after."""
    events_url, checkpoints_url = urls
    session = f"{path}-{bot}"
    store, hub = open_store(checkpoints_url), EventHub(RedisEventStore(events_url))
    publisher = await hub.open(session)
    at_checkpoint: dict[int, list[dict[str, Any]]] = {}

    def on_turn(trace: dict[str, Any]) -> None:  # called right after the turn's checkpoint
        at_checkpoint[trace["turn"]] = stored(events_url, session)

    await PATHS[path](
        ROOT / "bots" / bot,
        ROOT / "bots" / bot / "scenarios" / scenario,
        on_turn=on_turn,
        checkpointer=Checkpointer(store, Identity("local", bot, session)),
        events=publisher,
    )
    await publisher.aclose("done")
    await store.close()
    await hub.store.close()
    return at_checkpoint, stored(events_url, session)


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize(("bot", "scenario"), CALLS, ids=[bot for bot, _ in CALLS])
def test_the_events_of_a_checkpointed_turn_are_stored_before_its_checkpoint(
    servers: tuple[str, str], path: str, bot: str, scenario: str
) -> None:
    at_checkpoint, log = asyncio.run(play(path, bot, scenario, servers))
    assert len(at_checkpoint) >= 3, "the scenario has too few turns to show anything"
    ends = {e["turn"]: e["seq"] for e in log if e["kind"] == "turn_ended"}
    for turn, there in sorted(at_checkpoint.items()):
        owed = [
            (e["seq"], e["kind"])
            for e in log
            if e["seq"] < ends[turn] and e["kind"] not in AFTER_CHECKPOINT
        ]
        seqs = {e["seq"] for e in there}
        missing = [item for item in owed if item[0] not in seqs]
        assert not missing, f"turn {turn}: checkpointed before these events were stored: {missing}"


async def play_unanswered(urls: tuple[str, str]) -> tuple[int, int, int, int]:
    """A call whose event store holds every write until the call has ended.

    Returns the turns its checkpoint holds when the call ends and the events stored then, and,
    once the store answers again and the publisher closes, the events emitted and stored.
    """
    events_url, checkpoints_url = urls
    bot, session = "order_desk", "unanswered"
    store, hub = open_store(checkpoints_url), EventHub(RedisEventStore(events_url))
    publisher = await hub.open(session)
    client = redis.Redis.from_url(events_url)
    client.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    try:
        await run_scenario_direct(
            ROOT / "bots" / bot,
            ROOT / "bots" / bot / "scenarios" / "long_session.yaml",
            checkpointer=Checkpointer(store, Identity("local", bot, session)),
            events=publisher,
        )
        checkpoint = await store.load(Identity("local", bot, session))
        assert checkpoint is not None
        held = len(stored(events_url, session))
    finally:
        client.execute_command("CLIENT", "UNPAUSE")
        client.close()
    await publisher.aclose("done")
    await store.close()
    await hub.store.close()
    turns_done = int(checkpoint.payload["turns_done"])  # type: ignore[arg-type]
    return turns_done, held, publisher.emitted, len(stored(events_url, session))


def test_an_event_store_that_does_not_answer_holds_no_call(servers: tuple[str, str]) -> None:
    turns_done, held, emitted, kept = asyncio.run(play_unanswered(servers))
    turns = len(
        load_scenario(ROOT / "bots" / "order_desk" / "scenarios" / "long_session.yaml").turns
    )
    assert turns_done == turns, "a checkpoint waited for an event store that did not answer"
    assert held == 0, "the events' server wrote while it held every write"
    assert kept == emitted, "an event was lost once the store answered again"
