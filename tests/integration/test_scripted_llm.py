"""ScriptedLLM behaves like a real model inside a real pipecat pipeline."""

from __future__ import annotations

from tests.pipecat_support import Recorder, messages_summary, tool, tools

# isort: split

import pytest
from pipecat.frames.frames import LLMTextFrame
from pipecat.processors.aggregators.llm_context import LLMContext

from pipecat_steward.testing import Call, FunctionStep, Say, ScriptedLLM, TextPipeline


async def test_scripted_text_reaches_the_tts_sentence_by_sentence():
    """A Say step is spoken (one TTS segment per sentence) and recorded as the reply."""
    llm = ScriptedLLM([Say("Welcome to Bella Notte. How many guests?")])
    async with TextPipeline(llm) as pipeline:
        await pipeline.say("hello")
        await pipeline.settle()
    assert pipeline.spoken == ["Welcome to Bella Notte.", "How many guests?"]
    assert messages_summary(pipeline.context.get_messages()) == [
        ("user", "hello"),
        ("assistant", "Welcome to Bella Notte. How many guests?"),
    ]


async def test_a_streamed_reply_reaches_the_tts_and_the_context_as_said():
    """Streamed a few characters a frame, as a model streams tokens, the reply is the same."""
    said: list[str] = []
    llm = ScriptedLLM([Say("Welcome to Bella Notte. How many guests?")], chunk=3)
    llm.add_event_handler("on_after_push_frame", lambda _, frame: said.append(frame))
    async with TextPipeline(llm) as pipeline:
        await pipeline.say("hello")
        await pipeline.settle()
    pieces = [f.text for f in said if isinstance(f, LLMTextFrame)]
    assert "".join(pieces) == "Welcome to Bella Notte. How many guests?"
    assert max(len(p) for p in pieces) == 3 and len(pieces) > 10
    assert pipeline.spoken == ["Welcome to Bella Notte.", "How many guests?"]
    assert messages_summary(pipeline.context.get_messages())[-1] == (
        "assistant",
        "Welcome to Bella Notte. How many guests?",
    )


def test_a_chunk_of_no_characters_is_refused():
    with pytest.raises(ValueError, match="chunk must be at least 1"):
        ScriptedLLM([], chunk=0)


async def test_visible_tool_call_runs_the_handler_and_triggers_reinference():
    """A call to an advertised tool runs its handler; the result comes back and re-runs."""
    setter = Recorder({"stored": True, "value": 4})
    llm = ScriptedLLM([Call("set_party_size", {"size": 4}), Say("Four guests. What time?")])
    llm.register_function("set_party_size", setter)
    context = LLMContext(tools=tools(tool("set_party_size", size="integer")))
    async with TextPipeline(llm, context=context) as pipeline:
        await pipeline.say("a table for four")
        await pipeline.settle()
    assert setter.calls == [{"size": 4}]
    first, second = llm.inferences
    assert [(c.name, c.outcome) for c in first.calls] == [("set_party_size", "ok")]
    assert first.calls[0].result == {"stored": True, "value": 4}
    assert (first.seen.direction, second.seen.direction) == ("downstream", "upstream")
    assert second.seen.messages[-1]["role"] == "tool"
    assert pipeline.spoken == ["Four guests.", "What time?"]


async def test_call_to_an_invisible_tool_is_refused_and_not_executed():
    """Like a real model, the scripted LLM cannot call a tool the context does not advertise."""
    hidden = Recorder({"booked": True})
    llm = ScriptedLLM([[Call("book_table", {"time": "19:00"}), Say("Let me check.")]])
    llm.register_function("book_table", hidden)
    context = LLMContext(tools=tools(tool("check_availability", date="string")))
    async with TextPipeline(llm, context=context) as pipeline:
        await pipeline.say("book it")
        await pipeline.settle()
    assert hidden.calls == []
    assert [(c.name, c.outcome) for c in llm.calls] == [("book_table", "refused")]
    assert llm.inferences[0].visible_tools == ("check_availability",)
    assert len(llm.inferences) == 1  # nothing ran, so nothing asked for a re-inference
    assert pipeline.spoken == ["Let me check."]


async def test_dynamic_step_sees_tools_instructions_and_the_caller():
    """A FunctionStep is decided at inference time from what the model sees."""

    def answer(seen):
        return Say(f"You said {seen.last_user_text}; I see {len(seen.tools)} tools.")

    llm = ScriptedLLM([FunctionStep(answer)], system_instruction="You take bookings.")
    context = LLMContext(tools=tools(tool("a"), tool("b")))
    async with TextPipeline(llm, context=context) as pipeline:
        await pipeline.say("hi")
        await pipeline.settle()
    assert pipeline.spoken == ["You said hi; I see 2 tools."]
    assert llm.inferences[0].seen.system == "You take bookings."


async def test_failing_handler_is_recorded_as_error_and_exhausted_script_stays_silent():
    """A handler that raises gives outcome `error`; with no steps left the model says nothing."""

    async def broken(params):
        raise RuntimeError("backend down")

    llm = ScriptedLLM([Call("lookup")])
    llm.register_function("lookup", broken)
    context = LLMContext(tools=tools(tool("lookup")))
    async with TextPipeline(llm, context=context) as pipeline:
        await pipeline.say("look it up")
        await pipeline.settle()
    assert [c.outcome for c in llm.calls] == ["error"]
    assert [i.scripted for i in llm.inferences] == [True, False]
    assert pipeline.spoken == []
