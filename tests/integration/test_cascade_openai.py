"""pipecat's real OpenAILLMService against the local chat-completions fake, with the relay."""

from __future__ import annotations

from tests.pipecat_support import EventLog, Recorder, messages_summary, tool, tools

# isort: split

from collections import Counter

from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.services.openai.llm import OpenAILLMService

from pipecat_steward.pipecat.events import AssistantTextComplete, FunctionCallResult
from pipecat_steward.pipecat.relay import StewardRelay
from pipecat_steward.testing import Call, ChatCompletionsServer, Say, TextPipeline


def openai_llm(server: ChatCompletionsServer) -> OpenAILLMService:
    settings = OpenAILLMService.Settings(model="gpt-test", system_instruction="You book tables.")
    return OpenAILLMService(api_key="test", base_url=server.base_url, settings=settings)


async def test_streamed_tool_call_round_trip_through_the_real_openai_service():
    """A streamed tool call runs the handler, the result goes back in the next request."""
    script = [Call("check_availability", {"date": "tomorrow"}), Say("We have seven PM. Shall I book it?")]
    availability = Recorder({"slots": ["19:00"]})
    async with ChatCompletionsServer(script, token_delay=0.001) as server:
        llm = openai_llm(server)
        llm.register_function("check_availability", availability)
        context = LLMContext(tools=tools(tool("check_availability", date="string")))
        relay = StewardRelay()
        log = EventLog(relay)
        async with TextPipeline(llm, context=context, observers=[relay]) as pipeline:
            await pipeline.say("Is there a table tomorrow?")
            await pipeline.settle()
            await relay.bus.drain()
    assert availability.calls == [{"date": "tomorrow"}]
    assert server.errors == []
    first, second = server.received
    assert first["stream"] is True and [t["function"]["name"] for t in first["tools"]] == ["check_availability"]
    assert first["messages"][0] == {"role": "system", "content": "You book tables."}
    assert messages_summary(second["messages"])[-3:] == [
        ("user", "Is there a table tomorrow?"),
        ("assistant", "call:check_availability"),
        ("tool", 'result:{"slots": ["19:00"]}'),
    ]
    assert pipeline.spoken == ["We have seven PM.", "Shall I book it?"]
    assert Counter(log.kinds()) == Counter(
        {
            "UserStartedSpeaking": 1,
            "UserTranscript": 1,
            "Interruption": 1,
            "FunctionCallStarted": 1,
            "FunctionCallResult": 1,
            "AssistantTextComplete": 1,
            "BotStartedSpeaking": 1,
            "BotStoppedSpeaking": 1,
            "AssistantTurnWritten": 1,
        }
    )
    assert [e.text for e in log.of(AssistantTextComplete)] == ["We have seven PM. Shall I book it?"]
    assert log.of(FunctionCallResult)[0].result == {"slots": ["19:00"]}


async def test_two_turns_keep_history_in_order():
    """Plain streamed replies are spoken and the next request carries the whole history."""
    server = ChatCompletionsServer([Say("Hello! How many guests?"), Say("Great.")])
    async with server, TextPipeline(openai_llm(server)) as pipeline:
        await pipeline.say("Hi")
        await pipeline.settle()
        await pipeline.say("Two")
        await pipeline.settle()
    assert messages_summary(server.received[1]["messages"]) == [
        ("system", "You book tables."),
        ("user", "Hi"),
        ("assistant", "Hello! How many guests?"),
        ("user", "Two"),
    ]
    assert pipeline.spoken == ["Hello!", "How many guests?", "Great."]
