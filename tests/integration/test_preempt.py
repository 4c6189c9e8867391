"""Preempted replies, engine-fired tool records and notes, through real aggregators."""

from __future__ import annotations

from tests.pipecat_support import messages_summary, tool, tools

# isort: split

import asyncio
from collections.abc import Callable
from typing import Any

from pipecat.frames.frames import Frame, LLMContextFrame
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.openai.llm import OpenAILLMService

from pipecat_steward.pipecat.preempt import (
    emit_reply,
    inject_note,
    record_tool_exchange,
    split_sentences,
)
from pipecat_steward.testing import ChatCompletionsServer, Say, ScriptedLLM, TextPipeline
from pipecat_steward.testing.servers import tool_ordering_error

OFFER = "We have six PM and seven thirty PM. Which time works?"
LONG = (
    "Sure thing. We have six PM and seven thirty PM available tomorrow evening, "
    "and both of them are quiet window tables near the garden."
)

Plan = Callable[[LLMContext], "str | None"]


def preempting(llm: Any, plan: list[Plan]) -> Any:
    """Attach a before-inference wrapper to `llm`: each planned callable may answer instead."""
    original = llm.process_frame

    async def process_frame(frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, LLMContextFrame) and plan:
            text = plan.pop(0)(frame.context)
            if text is not None:
                await emit_reply(llm, text)
                return
        await original(frame, direction)

    llm.process_frame = process_frame
    return llm


def test_split_sentences_keeps_every_character():
    """Sentences keep their leading space so the aggregator rebuilds the exact text."""
    assert split_sentences(OFFER) == ["We have six PM and seven thirty PM.", " Which time works?"]
    assert "".join(split_sentences(LONG)) == LONG
    assert split_sentences("no final stop") == ["no final stop"]
    assert split_sentences("") == []


async def test_preempted_reply_is_spoken_and_recorded_like_a_model_reply():
    """The LLM skips inference; TTS speaks the sentences; the context holds the reply."""
    llm = preempting(ScriptedLLM([Say("unused")]), [lambda ctx: OFFER])
    async with TextPipeline(llm) as pipeline:
        await pipeline.say("Is there a table tomorrow?")
        await pipeline.settle()
    assert llm.inferences == []  # the real inference never ran
    assert pipeline.spoken == ["We have six PM and seven thirty PM.", "Which time works?"]
    assert messages_summary(pipeline.context.get_messages()) == [
        ("user", "Is there a table tomorrow?"),
        ("assistant", OFFER),
    ]


async def test_barge_in_keeps_exactly_the_sentences_already_spoken():
    """An interruption mid-utterance keeps the spoken sentence and drops the unspoken one."""
    llm = preempting(ScriptedLLM([Say("Okay, seven thirty it is.")]), [lambda ctx: LONG])
    async with TextPipeline(llm, secs_per_word=0.06) as pipeline:
        await pipeline.say("Is there a table tomorrow?")
        async with asyncio.timeout(3):
            while not pipeline.bot_speaking:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.45)  # "Sure thing." (2 words) has played; the long one has not
        await pipeline.say("Actually, 7:30.")
        await pipeline.settle()
    assert messages_summary(pipeline.context.get_messages()) == [
        ("user", "Is there a table tomorrow?"),
        ("assistant", "Sure thing."),
        ("user", "Actually, 7:30."),
        ("assistant", "Okay, seven thirty it is."),
    ]


async def test_engine_fired_call_is_recorded_as_a_pair_and_the_next_request_is_valid():
    """A tool run by the engine plus a preempt leaves no orphan call for the real model."""

    def fire_and_offer(context: LLMContext) -> str:
        record_tool_exchange(context, "check_availability", {"date": "tomorrow"}, {"slots": ["18:00"]})
        return OFFER

    async with ChatCompletionsServer([Say("Booked for six.")]) as server:
        settings = OpenAILLMService.Settings(model="gpt-test", system_instruction="Book tables.")
        llm = OpenAILLMService(api_key="test", base_url=server.base_url, settings=settings)
        context = LLMContext(tools=tools(tool("check_availability", date="string")))
        async with TextPipeline(preempting(llm, [fire_and_offer]), context=context) as pipeline:
            await pipeline.say("Is there a table tomorrow?")
            await pipeline.settle()
            assert server.received == []  # preempted: no request at all
            await pipeline.say("Six please.")
            await pipeline.settle()
    messages = context.get_messages()
    assert tool_ordering_error(messages) is None
    assert server.errors == [] and len(server.received) == 1
    call, result = messages[1], messages[2]
    assert call["tool_calls"][0]["id"] == result["tool_call_id"]
    assert call["tool_calls"][0]["id"].startswith("steward_")
    assert messages_summary(server.received[0]["messages"])[1:] == [
        ("user", "Is there a table tomorrow?"),
        ("assistant", "call:check_availability"),
        ("tool", 'result:{"slots": ["18:00"]}'),
        ("assistant", OFFER),
        ("user", "Six please."),
    ]


async def test_injected_note_is_written_in_order_and_can_ask_for_a_response():
    """inject_note queues into the LLM: silent notes only edit context, run_llm=True answers."""
    llm = ScriptedLLM([Say("Hello."), Say("Noted, I will ask for ID.")])
    async with TextPipeline(llm) as pipeline:
        await pipeline.say("Hi")
        await pipeline.settle()
        await inject_note(llm, "Refunds need ID.", run_llm=False)
        await pipeline.settle()
        assert len(llm.inferences) == 1
        frame = await inject_note(llm, "Ask for the order number.", run_llm=True)
        await pipeline.settle()
    assert frame.interruptible is False
    assert len(llm.inferences) == 2 and llm.inferences[1].seen.direction == "upstream"
    assert llm.inferences[1].seen.notes == ("Refunds need ID.", "Ask for the order number.")
    assert messages_summary(pipeline.context.get_messages())[-3:] == [
        ("developer", "Refunds need ID."),
        ("developer", "Ask for the order number."),
        ("assistant", "Noted, I will ask for ID."),
    ]
