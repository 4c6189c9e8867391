"""``client_messages=False``: a call no client reads gets no RTVI message, and nothing else changes.

On a telephone call nobody reads the steward's RTVI server messages; each one would cross the
pipeline for nothing. Switched off, the call says and does exactly what it does with them: the
same traces, the same conversation events for the store and the subscribers, the same hand-overs
and end. Every path takes its messages from the session and the driver, so the switch holds on
the cascaded hook, the speech-to-speech adapter and the direct driver alike.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path
from typing import Any

import pytest
from tests.integration.test_stale_worker import ServerMessages

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.events import EventPublisher
from pipecat_steward.runtime.driver import Driver
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.testing.player import play_scenario
from pipecat_steward.testing.scenario import load_scenario
from pipecat_steward.testing.simulate import PipelinePlayer

BOTS = Path(__file__).resolve().parents[2] / "bots"

# Each call with the kinds of message its client gets: checklist status, conversation events,
# rich response parts (here the end of a call whose retries ran out).
CALLS = {
    "clinic": ("appointment_to_payment.yaml", {"procedure_status", "steward_events"}),
    "bella_notte": ("happy_path.yaml", {"steward_events"}),
    "bella_ends": ("steer_back.yaml", {"steward_events", "steward_response"}),
    "lead_capture": ("seed_003_four_turns.yaml", {"steward_events"}),
    "order_desk": ("cancel_order.yaml", {"steward_events"}),
}


def _comparable(events: list[Any]) -> list[dict[str, Any]]:
    drop = {"t", "session", "started_at"}
    return [{k: v for k, v in e.model_dump(mode="json").items() if k not in drop} for e in events]


async def _call(bot: str, file: str, **options: Any) -> tuple[Any, list[dict[str, Any]], Any]:
    scenario = load_scenario(BOTS / bot / "scenarios" / file)
    publisher = EventPublisher(scenario.name)
    player = await PipelinePlayer.start(BOTS / bot, scenario, events=publisher, **options)
    messages = ServerMessages()
    async with player.running([messages]):
        traces = await play_scenario(player, scenario)
    await player.steward.events.aclose()
    return traces, messages.data, publisher.events


@pytest.mark.parametrize("call", CALLS)
async def test_a_call_without_a_client_sends_nothing_and_does_the_same(call: str) -> None:
    bot, (file, kinds) = call.replace("bella_ends", "bella_notte"), CALLS[call]
    traces, sent, events = await _call(bot, file, client_messages=True)
    quiet_traces, quiet_sent, quiet_events = await _call(bot, file, client_messages=False)
    assert {m["type"] for m in sent} == kinds, "with a client these go out"
    assert quiet_sent == []
    assert quiet_traces == traces
    assert _comparable(quiet_events) == _comparable(events)


async def test_the_driver_hands_no_path_a_message_yet_carries_out_the_parts() -> None:
    # The speech-to-speech adapter and the direct player send what the driver hands them.
    agent = load_agent(BOTS / "bella_notte")
    outcomes = []
    for client in (True, False):
        session = open_session(agent, client_messages=client)
        driver = Driver(session)
        outcome = await driver.inference("hello", first_turn=True)
        session.client_outbox.append({"type": "app_note"})
        done = await driver.complete(outcome)
        outcomes.append((outcome, done, session))
    (outcome, done, _), (quiet, quiet_done, session) = outcomes
    assert [*outcome.messages, *done.messages], "with a client the driver hands messages"
    assert [*quiet.messages, *quiet_done.messages] == []
    assert (quiet.action, quiet.say, quiet_done.end) == (outcome.action, outcome.say, done.end)
    assert session.client_outbox == [], "nothing piles up for a client that never reads it"
