"""A speech-to-speech scenario's trace does not depend on how fast the provider answers.

The harness settles each caller turn on explicit completion (the provider fake and the service
have each handled everything the other sent, no response is running, the pipeline is idle), so
a provider that takes longer to start answering than any quiet window yields the same trace as
an instant one, and a settled turn has nothing left in flight. This holds on each provider fake
(OpenAI Realtime, Gemini Live, Nova Sonic) behind pipecat's real service.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder, tool, tools
from tests.pipecat_support.s2s import (
    GENAI_3_WARNING,
    S2S_KINDS,
    s2s_provider,
    tool_outputs_received,
)

# isort: split

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pipecat.frames.frames import LLMRunFrame, TranscriptionFrame
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.services.openai.realtime.events import ResponseCreateEvent

from pipecat_steward.testing import Call, ProviderSync, RealtimeServer, Say, TextPipeline
from pipecat_steward.testing.script import Step
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
SLOW = 0.7  # seconds before each response starts: longer than any quiet window (0.3, 0.6)
WEATHER = tool("get_weather", city="string")
KINDS = [pytest.param(k, marks=GENAI_3_WARNING) if k == "gemini_live" else k for k in S2S_KINDS]


@dataclass
class Provider:
    """A running provider fake, the real service on it, and the fake's settler."""

    fake: Any
    llm: Any
    sync: ProviderSync
    tool_outputs: Callable[[], list[str]]


@asynccontextmanager
async def provider(kind: str, script: list[Step], latency: float) -> AsyncIterator[Provider]:
    """Start the fake of ``kind`` with ``script`` and ``latency``, and its real service."""
    async with s2s_provider(
        kind, script, instruction="Be brief.", tools=tools(WEATHER), latency=latency
    ) as (fake, llm):
        outputs = lambda: tool_outputs_received(kind, fake)  # noqa: E731
        yield Provider(fake, llm, fake.settler(llm), outputs)


def s2s_pipeline(p: Provider, **kwargs: Any) -> TextPipeline:
    """A speech-to-speech pipeline on ``p``'s service whose caller said "Hi"."""
    context = LLMContext([{"role": "user", "content": "Hi"}])
    return TextPipeline(
        p.llm, context=context, speech_to_speech=True, provider_sync=p.sync, **kwargs
    )


def comparable(traces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The traces without wall-clock measurements."""
    return [{k: v for k, v in t.items() if not k.endswith("_ms")} for t in traces]


@pytest.mark.parametrize("name", SCENARIOS)
async def test_a_slow_provider_gives_the_trace_of_a_fast_one(name: str) -> None:
    """The same scenario on an instant and a slow Realtime fake: identical traces."""
    bot, stem = name.split("/")
    scenario = load_scenario(BOTS / bot / "scenarios" / f"{stem}.yaml")
    fast = await run_scenario_s2s(BOTS / bot, scenario)
    slow = await run_scenario_s2s(BOTS / bot, scenario, provider=RealtimeServer(latency=SLOW))
    assert any(t["bot"] for t in fast)
    assert comparable(slow) == comparable(fast)


@pytest.mark.parametrize("latency", [0.0, SLOW])
@pytest.mark.parametrize("kind", KINDS)
async def test_settle_returns_once_the_whole_answer_arrived(kind: str, latency: float) -> None:
    """`settle` waits out a slow first audio, and nothing more arrives after it returns."""
    async with provider(kind, [Say("One two three.")], latency) as p, s2s_pipeline(p) as pipe:
        started = time.monotonic()
        await pipe.worker.queue_frame(LLMRunFrame())
        await pipe.settle()
        assert time.monotonic() - started >= latency
        assert "".join(pipe.spoken) == "One two three."
        settled = (list(pipe.spoken), len(p.fake.received), pipe.activity.moves)
        await asyncio.sleep(SLOW + 0.2)  # whatever was still coming would arrive now
        assert (pipe.spoken, len(p.fake.received), pipe.activity.moves) == settled


@pytest.mark.parametrize("kind", KINDS)
async def test_settle_waits_for_a_tool_round_trip_and_the_answer_to_it(kind: str) -> None:
    """A slow tool call, its result back to the fake, the slow answer: all in one settle."""
    script: list[Step] = [Call("get_weather", {"city": "Oslo"}), Say("It is mild.")]
    handler = Recorder({"temp_c": 21})
    async with provider(kind, script, SLOW) as p, s2s_pipeline(p) as pipe:
        p.llm.register_function("get_weather", handler)
        await pipe.worker.queue_frame(LLMRunFrame())
        await pipe.settle()
        assert handler.calls == [{"city": "Oslo"}]
        assert len(p.tool_outputs()) == 1
        assert "".join(pipe.spoken).endswith("It is mild.")


@pytest.mark.parametrize("connected", [False, True], ids=["connecting", "connected"])
@pytest.mark.parametrize("kind", KINDS)
async def test_a_sync_counts_every_client_message_the_fake_received(
    kind: str, connected: bool
) -> None:
    """A sync counts what reached the fake before its marker; a settled turn, everything.

    Called as the service connects, a sync waits for the session. The run frame queued just
    before it may still be in the pipeline when its marker goes out (always so once the
    session is up), and what the service sends after the marker is the next sync's: the
    count is at most what the fake holds afterwards, and the harness settles only when two
    syncs agree.
    """
    async with provider(kind, [Say("Hello.")], 0.0) as p, s2s_pipeline(p) as pipe:
        if connected:
            await p.sync()
        await pipe.worker.queue_frame(LLMRunFrame())
        first = await p.sync()
        assert 0 < first <= len(p.fake.received)
        await pipe.settle()
        assert await p.sync() == len(p.fake.received) >= first
        assert "".join(pipe.spoken).strip() == "Hello."


async def test_a_realtime_sync_counts_a_message_sent_just_before_it() -> None:
    """A client event sent straight on the connection is counted by the next sync."""
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


class Transcripts(BaseObserver):
    """The caller transcripts the speech-to-speech service pushed."""

    def __init__(self, llm: Any) -> None:
        super().__init__()
        self.llm = llm
        self.texts: list[str] = []

    async def on_push_frame(self, data: FramePushed) -> None:
        if isinstance(data.frame, TranscriptionFrame) and data.source is self.llm:
            self.texts.append(data.frame.text)


@GENAI_3_WARNING
async def test_gemini_settle_waits_for_the_flush_of_an_unpunctuated_transcript() -> None:
    """Pipecat holds a transcript with no end punctuation for 0.5 s; settle waits for it."""
    async with provider("gemini_live", [], 0.0) as p:
        heard = Transcripts(p.llm)
        async with s2s_pipeline(p, observers=[heard]) as pipe:
            await pipe.worker.queue_frame(LLMRunFrame())
            await pipe.settle()
            started = time.monotonic()
            await p.fake.user_says("a table for four")
            await pipe.settle()
            assert time.monotonic() - started >= 0.5
            assert heard.texts == ["a table for four"]
