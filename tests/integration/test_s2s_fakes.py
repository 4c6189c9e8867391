"""The provider fakes drive pipecat's real speech-to-speech services offline.

For each of OpenAI Realtime, Gemini Live and Nova Sonic: a note injected with `inject_note`
reaches the provider; a provider function call reaches the registered handler and its
result goes back over the wire; a vetoing wrapper keeps the real handler from running and
its refusal (with a directive riding in it) is what the provider receives.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder, tool, tools

# isort: split

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from pipecat.frames.frames import LLMRunFrame
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.services.llm_service import FunctionCallParams

from pipecat_steward.pipecat.channels import LLMKind, channels_for, detect_kind
from pipecat_steward.pipecat.preempt import inject_note
from pipecat_steward.testing import (
    Call,
    GeminiLiveServer,
    NovaSonicFake,
    ProviderSync,
    RealtimeServer,
    Say,
    TextPipeline,
    nova_sonic_service,
)

WEATHER = tool("get_weather", city="string")
SCRIPT = [Say("Hello."), Call("get_weather", {"city": "Oslo"}), Say("It is mild.")]
DIRECTIVE = "Ask for the reservation date next."


@dataclass
class Provider:
    """A running fake, the real service talking to it, and what the fake received."""

    llm: Any
    notes: Callable[[], list[str]]
    tool_outputs: Callable[[], list[str]]
    sync: ProviderSync


@asynccontextmanager
async def openai_realtime() -> AsyncIterator[Provider]:
    from pipecat.services.openai.realtime import events
    from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

    async with RealtimeServer(list(SCRIPT)) as fake:
        session = events.SessionProperties(tools=tools(WEATHER))
        settings = OpenAIRealtimeLLMService.Settings(system_instruction="Base.", session_properties=session)
        llm = OpenAIRealtimeLLMService(api_key="test", base_url=fake.url, settings=settings)

        def notes() -> list[str]:
            items = [e["item"] for e in fake.of_type("conversation.item.create")]
            return [c["text"] for i in items if i["type"] == "message" for c in i["content"]]

        def outputs() -> list[str]:
            items = [e["item"] for e in fake.of_type("conversation.item.create")]
            return [i["output"] for i in items if i["type"] == "function_call_output"]

        yield Provider(llm, notes, outputs, fake.settler(llm))


@asynccontextmanager
async def gemini_live() -> AsyncIterator[Provider]:
    from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService

    async with GeminiLiveServer(list(SCRIPT)) as fake:
        settings = GeminiLiveLLMService.Settings(system_instruction="Base.")
        llm = GeminiLiveLLMService(
            api_key="test", http_options=fake.http_options(), settings=settings, tools=tools(WEATHER)
        )
        outputs = lambda: [json.dumps(r["response"]) for r in fake.tool_responses()]  # noqa: E731
        yield Provider(llm, fake.texts, outputs, fake.settler(llm))


@asynccontextmanager
async def nova_sonic() -> AsyncIterator[Provider]:
    pytest.importorskip("aws_sdk_bedrock_runtime", reason="Nova Sonic needs Python >= 3.12")
    from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService

    async with NovaSonicFake(list(SCRIPT)) as fake:
        settings = AWSNovaSonicLLMService.Settings(system_instruction="Base.")
        llm = nova_sonic_service(fake, settings=settings, tools=tools(WEATHER))
        texts = lambda: [text for text, _ in fake.texts()]  # noqa: E731
        yield Provider(llm, texts, fake.tool_results, fake.settler(llm))


PROVIDERS = {
    LLMKind.OPENAI_REALTIME: openai_realtime,
    LLMKind.GEMINI_LIVE: gemini_live,
    LLMKind.NOVA_SONIC: nova_sonic,
}
# google-genai 3.x (pulled in by the slm extra; pipecat's `google` extra pins <3) warns
# that pipecat still sets `LiveConnectConfig.generation_config`; as an error it would
# abort the Gemini connection. Only that message is ignored, only for Gemini.
GENAI_3_WARNING = pytest.mark.filterwarnings(
    "ignore:Setting `LiveConnectConfig.generation_config` is deprecated"
)
KINDS = pytest.mark.parametrize(
    "kind",
    [
        LLMKind.OPENAI_REALTIME,
        pytest.param(LLMKind.GEMINI_LIVE, marks=GENAI_3_WARNING),
        LLMKind.NOVA_SONIC,
    ],
    ids=str,
)


async def converse(provider: Provider) -> TextPipeline:
    """Open the session, inject a silent note, then a note that makes the model call a tool."""
    context = LLMContext([{"role": "user", "content": "Hi"}])
    pipeline = TextPipeline(
        provider.llm, context=context, speech_to_speech=True, provider_sync=provider.sync
    )
    async with pipeline:
        await pipeline.worker.queue_frame(LLMRunFrame())
        await pipeline.settle()
        await inject_note(provider.llm, "Supervisor: refunds need ID.", run_llm=False)
        await pipeline.settle()
        await inject_note(provider.llm, "What is the weather in Oslo?", run_llm=True)
        await pipeline.settle(timeout=10)
    return pipeline


@KINDS
async def test_note_reaches_the_provider_and_tool_result_goes_back(kind: LLMKind):
    """inject_note is delivered on the wire; the provider's call runs the handler."""
    handler = Recorder({"temp_c": 21, "directive": DIRECTIVE})
    async with PROVIDERS[kind]() as provider:
        provider.llm.register_function("get_weather", handler)
        assert detect_kind(provider.llm) is kind
        pipeline = await converse(provider)
    assert "Supervisor: refunds need ID." in provider.notes()
    assert handler.calls == [{"city": "Oslo"}]
    assert [json.loads(o) for o in provider.tool_outputs()] == [{"temp_c": 21, "directive": DIRECTIVE}]
    assert pipeline.spoken[-3:] == ["It", " is", " mild."] or pipeline.spoken[-1] == "It is mild."


@KINDS
async def test_vetoed_call_never_runs_and_the_refusal_carries_the_directive(kind: LLMKind):
    """A wrapper around the handler refuses the call; the model reads the refusal."""
    real = Recorder({"temp_c": 21})

    async def veto(params: FunctionCallParams) -> None:
        refusal = {"error": "get_weather is not available right now", "directive": DIRECTIVE}
        await params.result_callback(refusal)

    async with PROVIDERS[kind]() as provider:
        provider.llm.register_function("get_weather", veto)
        await converse(provider)
    assert real.calls == []
    (output,) = provider.tool_outputs()
    assert json.loads(output)["directive"] == DIRECTIVE


def test_channel_rows_match_what_each_kind_supports():
    """The capability table says which channels each kind offers (see docs/providers.md)."""
    from pipecat_steward.testing import ScriptedLLM

    cascaded = channels_for(ScriptedLLM())
    assert cascaded.kind is LLMKind.CASCADED and cascaded.per_inference_hook
    assert cascaded.instruction_update and cascaded.tool_set_update
