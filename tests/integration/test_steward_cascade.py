"""The steward inside real cascaded pipelines: pipecat's OpenAI service on a local server, the
scripted LLM, barge-in during a preempt and during an executor."""

from __future__ import annotations

from tests.pipecat_support import messages_summary

# isort: split

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.services.openai.llm import OpenAILLMService

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing import Call, ChatCompletionsServer, Say, ScriptedLLM, TextPipeline
from pipecat_steward.testing.servers.chat_completions import tool_ordering_error

BELLA = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"
BASICS = {"party_size": 4, "preferred_date": "2026-07-17"}


def names(request: dict[str, Any]) -> list[str]:
    return sorted(t["function"]["name"] for t in request.get("tools", []))


def system(request: dict[str, Any]) -> str:
    return request["messages"][0]["content"]


async def test_real_openai_service_sees_the_engine_tools_and_suffix_on_every_inference():
    steward = Steward.from_folder(BELLA)
    script = [
        Say("Welcome! How many guests?"),
        Call("set_reservation_basics", BASICS),
        Say("Four guests on July 17th, right?"),
    ]
    async with ChatCompletionsServer(script, token_delay=0.0005) as server:
        settings = OpenAILLMService.Settings(model="gpt-test")
        llm = OpenAILLMService(api_key="test", base_url=server.base_url, settings=settings)
        steward.attach(llm)
        context = LLMContext()
        async with TextPipeline(llm, context=context, observers=steward.observers) as pipeline:
            await pipeline.say("Hi")
            await pipeline.settle()
            await pipeline.say("A table for four on July 17th")
            await pipeline.settle()
            sent = len(server.received)
            await pipeline.say("Yes")
            await pipeline.settle()
    first, second, third = server.received
    assert names(first) == ["decline_slot", "set_guest_info", "set_reservation_basics"]
    assert "<system_directive>\nWelcome to Bella Notte!" in system(first)
    assert system(first).startswith(steward.agent.prompt.strip())
    # The re-inference after the setter result arrives upstream and is hooked too.
    assert "confirm_pending" not in names(third), "fresh pending: read back before confirming"
    assert "<readback_protocol>" in system(third) and "4 guests, July 17th" in system(third)
    assert system(third).count("<!-- steward -->") == 1, "one phase block, never two"
    # "Yes": auto-confirm and the availability check run without any LLM request.
    assert len(server.received) == sent == 3
    assert server.errors == [] and tool_ordering_error(context.get_messages()) is None
    assert pipeline.spoken[-2:] == [
        "For 4 on that date we have 18:00, 19:30, 21:00.",
        "Which time works best?",
    ]
    assert messages_summary(context.get_messages())[-6:] == [
        ("user", "Yes"),
        ("assistant", "call:confirm_pending"),
        ("tool", 'result:{"confirmed": ["party_size", "preferred_date"]}'),
        ("assistant", "call:find_available_times"),
        ("tool", 'result:{"success": true, "available_times": "18:00, 19:30, 21:00"}'),
        ("assistant", "For 4 on that date we have 18:00, 19:30, 21:00. Which time works best?"),
    ]
    assert steward.session.state.record("available_times").value == "18:00, 19:30, 21:00"
    assert second["messages"][-1]["role"] == "user" and third["messages"][-1]["role"] == "tool"


def scripted(*steps: Any) -> ScriptedLLM:
    return ScriptedLLM(list(steps))


async def reach_readback(pipeline: TextPipeline) -> None:
    await pipeline.say("Hi")
    await pipeline.settle()
    await pipeline.say("Four on July 17th")
    await pipeline.settle()


async def test_barge_in_during_a_preempt_keeps_exactly_the_spoken_sentences():
    steward = Steward.from_folder(BELLA)
    llm = scripted(
        Say("Welcome!"),
        Call("set_reservation_basics", BASICS),
        Say("Four on the 17th?"),
        Say("Sure."),
    )
    steward.attach(llm)
    async with TextPipeline(llm, observers=steward.observers, secs_per_word=0.06) as pipeline:
        await reach_readback(pipeline)
        await pipeline.say("Yes")
        async with asyncio.timeout(3):
            while not pipeline.bot_speaking:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.8)  # the first sentence (9 words) has played, the question has not
        await pipeline.say("Wait, is there parking?")
        await pipeline.settle(timeout=12)
    texts = messages_summary(pipeline.context.get_messages())
    spoken = [t for role, t in texts if role == "assistant" and "18:00" in t]
    assert spoken == ["For 4 on that date we have 18:00, 19:30, 21:00."]
    assert ("user", "Wait, is there parking?") in texts
    assert tool_ordering_error(pipeline.context.get_messages()) is None


async def test_barge_in_while_an_executor_runs_loses_no_state_and_leaves_no_orphan_call():
    started = asyncio.Event()

    async def slow_availability(party_size: int, preferred_date: str) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(0.6)
        return {"success": True, "available_times": "18:00, 21:00"}

    agent = load_agent(BELLA)
    agent = dataclasses.replace(
        agent, tools={**agent.tools, "find_available_times": slow_availability}
    )
    steward = Steward(agent)
    llm = scripted(
        Say("Welcome!"),
        Call("set_reservation_basics", BASICS),
        Say("Four on the 17th?"),
        Say("Sure."),
    )
    steward.attach(llm)
    async with TextPipeline(llm, observers=steward.observers, secs_per_word=0.02) as pipeline:
        await reach_readback(pipeline)
        await pipeline.say("Yes")
        await asyncio.wait_for(started.wait(), 3)
        await pipeline.say("Hold on, hold on")
        await pipeline.settle(timeout=12)
    state = steward.session.state
    assert state.record("available_times").value == "18:00, 21:00"
    assert "FindAvailableTimes" in state.succeeded
    messages = pipeline.context.get_messages()
    assert tool_ordering_error(messages) is None
    calls = [m for m in messages if isinstance(m, dict) and m.get("tool_calls")]
    results = [m for m in messages if isinstance(m, dict) and m.get("role") == "tool"]

    assert len(calls) == len(results) == 3  # setter, confirm_pending, find_available_times


async def test_a_speculative_inference_never_preempts_nor_changes_the_session():
    """Eager-turn (speculation=True) frames get tools and suffix, but never a preempt or a call."""
    from pipecat.frames.frames import LLMContextFrame
    from pipecat.processors.frame_processor import FrameDirection

    steward = Steward.from_folder(BELLA)
    llm = ScriptedLLM([])
    hook = steward.attach(llm)
    session = steward.session
    session.decide("Hi", first_turn=True)
    session.tool_call("set_reservation_basics", BASICS)
    session.decide("")  # the readback is read out: "yes" would now be auto-confirmed
    before = session.state.to_json()
    ran: list[bool] = []

    async def run(frame: Any, direction: Any) -> None:
        ran.append(True)

    context = LLMContext()
    context.add_messages(
        [{"role": "assistant", "content": "Four on the 17th?"}, {"role": "user", "content": "yes"}]
    )
    await hook.on_context(
        LLMContextFrame(context=context, speculation=True), FrameDirection.DOWNSTREAM, run
    )
    assert ran == [True], "the real inference ran"
    assert session.state.to_json() == before and not session.turn.fired
    assert {t.name for t in context.tools.standard_tools} >= {"confirm_pending"}
    # The confirmed (non-speculative) frame then auto-confirms without an inference.
    ran.clear()
    await hook.on_context(LLMContextFrame(context=context), FrameDirection.DOWNSTREAM, run)
    assert ran == [] and [c.name for c in session.turn.fired] == [
        "confirm_pending",
        "find_available_times",
    ]
    # The speculative inference's step was the committed one's: made once, used once.
    stats = session.anticipation.stats
    assert (stats.made, stats.hits, stats.misses) == (1, 1, 0)


async def test_an_instruction_the_app_sets_between_turns_is_replaced_by_the_stewards():
    """Each inference carries the steward's instruction, whatever the service held before."""
    from pipecat.frames.frames import LLMUpdateSettingsFrame
    from pipecat.services.settings import LLMSettings

    steward = Steward.from_folder(BELLA)
    script = [Say("Welcome! How many guests?"), Say("Which date?")]
    async with ChatCompletionsServer(script, token_delay=0.0005) as server:
        settings = OpenAILLMService.Settings(model="gpt-test")
        llm = OpenAILLMService(api_key="test", base_url=server.base_url, settings=settings)
        steward.attach(llm)
        async with TextPipeline(llm, observers=steward.observers) as pipeline:
            await pipeline.say("Hi")
            await pipeline.settle()
            theirs = LLMSettings(system_instruction="The app's own instruction.")
            await pipeline.worker.queue_frame(LLMUpdateSettingsFrame(delta=theirs))
            await pipeline.settle()
            await pipeline.say("Four of us")
            await pipeline.settle()
    first, second = server.received
    assert system(first).startswith(steward.agent.prompt.strip())
    assert system(second).startswith(steward.agent.prompt.strip())
    assert "The app's own instruction." not in system(second)
