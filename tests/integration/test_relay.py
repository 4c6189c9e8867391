"""StewardRelay turns a real pipeline's frames into session events, each exactly once."""

from __future__ import annotations

from tests.pipecat_support import EventLog, Recorder, tool, tools

# isort: split

import asyncio
import time
from collections import Counter

from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

from pipecat_steward.pipecat.events import (
    AssistantTextComplete,
    AssistantTurnWritten,
    EventBus,
    FunctionCallResult,
    FunctionCallStarted,
    UserTranscript,
)
from pipecat_steward.pipecat.relay import StewardRelay
from pipecat_steward.testing import Call, RealtimeServer, Say, ScriptedLLM, TextPipeline

CASCADED_TURN = Counter(
    {
        "UserStartedSpeaking": 1,
        "UserTranscript": 1,
        "Interruption": 1,  # the user aggregator interrupts when a user turn starts
        "FunctionCallStarted": 1,
        "FunctionCallResult": 1,
        "AssistantTextComplete": 1,  # the tool-call-only response carries no text
        "BotStartedSpeaking": 1,
        "BotStoppedSpeaking": 1,
        "AssistantTurnWritten": 1,
    }
)


def booking_llm() -> tuple[ScriptedLLM, LLMContext, Recorder]:
    setter = Recorder({"stored": True, "value": 4})
    llm = ScriptedLLM([Call("set_party_size", {"size": 4}), Say("Four guests. What time?")])
    llm.register_function("set_party_size", setter)
    return llm, LLMContext(tools=tools(tool("set_party_size", size="integer"))), setter


async def test_cascaded_turn_with_a_tool_call_gives_each_event_once():
    """One caller turn through ScriptedLLM: every event kind once, with the right content."""
    llm, context, _ = booking_llm()
    relay = StewardRelay()
    log = EventLog(relay)
    async with TextPipeline(llm, context=context, observers=[relay], user_id="u1") as pipeline:
        await pipeline.say("a table for four")
        await pipeline.settle()
        await relay.bus.drain()
    assert Counter(log.kinds()) == CASCADED_TURN
    assert log.of(UserTranscript) == [
        UserTranscript(text="a table for four", user_id="u1", source="cascade", at_ns=log.of(UserTranscript)[0].at_ns)
    ]
    (started,) = log.of(FunctionCallStarted)
    (result,) = log.of(FunctionCallResult)
    assert (started.name, dict(started.args)) == ("set_party_size", {"size": 4})
    assert (result.tool_call_id, result.result) == (started.tool_call_id, {"stored": True, "value": 4})
    assert [e.text for e in log.of(AssistantTextComplete)] == ["Four guests. What time?"]
    assert [e.text for e in log.of(AssistantTurnWritten)] == ["Four guests. What time?"]
    kinds = log.kinds()
    assert kinds.index("UserTranscript") < kinds.index("FunctionCallStarted")
    assert kinds.index("FunctionCallResult") < kinds.index("AssistantTextComplete")
    assert kinds.index("AssistantTextComplete") < kinds.index("AssistantTurnWritten")


async def test_failing_and_slow_subscribers_do_not_delay_frames_or_each_other():
    """A subscriber that raises is counted; one that sleeps holds back only its own queue."""
    bus = EventBus()
    fast: list[object] = []
    slow_seen: list[object] = []

    def explode(event):
        raise ValueError("subscriber bug")

    async def dawdle(event):
        slow_seen.append(event)
        await asyncio.sleep(30)

    failing = bus.subscribe(explode)
    slow = bus.subscribe(dawdle)
    bus.subscribe(fast.append)
    llm, context, setter = booking_llm()
    start = time.monotonic()
    async with TextPipeline(llm, context=context, observers=[StewardRelay(bus)]) as pipeline:
        await pipeline.say("a table for four")
        await pipeline.settle()
        elapsed = time.monotonic() - start
        assert pipeline.spoken == ["Four guests.", "What time?"]
        assert Counter(type(e).__name__ for e in fast) == CASCADED_TURN
    assert elapsed < 3.0  # a 30 s subscriber would have shown up here
    assert setter.calls == [{"size": 4}]
    assert failing.stats.errors == sum(CASCADED_TURN.values())
    assert len(slow_seen) == 1 and slow.queue.qsize() == sum(CASCADED_TURN.values()) - 1
    await bus.aclose(drain_timeout=0.1)


async def test_s2s_user_transcript_arrives_upstream_with_empty_user_id():
    """A speech-to-speech service's caller transcript is reported once, as `s2s`."""
    async with RealtimeServer([Say("Hi there.")]) as server:
        llm = OpenAIRealtimeLLMService(api_key="test", base_url=server.url)
        relay = StewardRelay()
        log = EventLog(relay)
        context = LLMContext([{"role": "user", "content": "hello"}])
        async with TextPipeline(
            llm,
            context=context,
            observers=[relay],
            speech_to_speech=True,
            provider_sync=server.settler(llm),
        ) as pipeline:
            await server.wait_for(lambda e: e["type"] == "session.updated" or e["type"] == "session.update")
            await server.user_says("I need a table")
            await pipeline.settle()
            await relay.bus.drain()
    assert [(e.text, e.user_id, e.source) for e in log.of(UserTranscript)] == [
        ("I need a table", "", "s2s")
    ]
