"""A speech-to-speech scenario's trace does not depend on how fast the provider answers.

The harness settles each caller turn on explicit completion (the provider fake and the service
have each handled everything the other sent, no response is running, the pipeline is idle), so
a provider that takes longer to start answering than any quiet window yields the same trace as
an instant one, and a settled turn has nothing left in flight.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from pipecat.services.openai.realtime.events import ResponseCreateEvent

from pipecat_steward.testing import RealtimeServer, Say, TextPipeline
from pipecat_steward.testing.simulate import load_scenario
from pipecat_steward.testing.simulate_s2s import realtime_service, run_scenario_s2s

BOTS = Path(__file__).resolve().parents[2] / "bots"
SCENARIOS = [
    "bella_notte/happy_path",
    "bella_notte/tool_exceptions",
    "order_desk/cancel_order",
    "lead_capture/invalid_email",
    "clinic/no_double_charge",
]
SLOW = 0.5  # seconds before each response starts: longer than any quiet window


def comparable(traces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The traces without wall-clock measurements."""
    return [{k: v for k, v in t.items() if not k.endswith("_ms")} for t in traces]


@pytest.mark.parametrize("name", SCENARIOS)
async def test_a_slow_provider_gives_the_trace_of_a_fast_one(name: str) -> None:
    bot, stem = name.split("/")
    scenario = load_scenario(BOTS / bot / "scenarios" / f"{stem}.yaml")
    fast = await run_scenario_s2s(BOTS / bot, scenario)
    slow = await run_scenario_s2s(BOTS / bot, scenario, provider=RealtimeServer(latency=SLOW))
    assert any(t["bot"] for t in fast)
    assert comparable(slow) == comparable(fast)


@pytest.mark.parametrize("latency", [0.0, SLOW])
async def test_settle_returns_once_nothing_more_is_coming(latency: float):
    async with RealtimeServer([Say("One two three.")], latency=latency) as fake:
        llm = realtime_service(fake, "Be brief.")
        async with TextPipeline(
            llm, speech_to_speech=True, provider_sync=fake.settler(llm)
        ) as pipe:
            await fake.wait_for(lambda e: e.get("type") == "session.update")
            await fake.user_says("Hello.")
            await pipe.settle()
            started = time.monotonic()
            await llm.send_client_event(ResponseCreateEvent())
            await pipe.settle()
            assert time.monotonic() - started >= latency
            assert "".join(pipe.spoken).startswith("One two three.")
            settled = (list(pipe.spoken), len(fake.received), pipe.activity.moves)
            await asyncio.sleep(SLOW + 0.2)  # whatever was still coming would arrive now
            assert (pipe.spoken, len(fake.received), pipe.activity.moves) == settled


async def test_a_sync_counts_what_the_fake_has_handled() -> None:
    async with RealtimeServer() as fake:
        llm = realtime_service(fake, "Be brief.")
        async with TextPipeline(llm, speech_to_speech=True) as pipe:
            sync = fake.settler(llm)
            await fake.wait_for(lambda e: e.get("type") == "session.update")
            first = await sync()
            assert first == len(fake.received)
            await llm.send_client_event(ResponseCreateEvent())
            assert await sync() == first + 1  # the marker came after the request, in order
            await pipe.settle()
            assert "".join(pipe.spoken).strip() == "Okay."
