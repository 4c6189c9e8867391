"""The provider fakes drive pipecat's real speech-to-speech services offline.

For each of OpenAI Realtime, Gemini Live and Nova Sonic: a note injected with `inject_note`
reaches the provider; a provider function call reaches the registered handler and its
result goes back over the wire; a vetoing wrapper keeps the real handler from running and
its refusal (with a directive riding in it) is what the provider receives.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder, tool, tools
from tests.pipecat_support.s2s import (
    GENAI_3_WARNING,
    notes_received,
    s2s_provider,
    tool_outputs_received,
)

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
from pipecat_steward.testing import Call, ProviderSync, Say, TextPipeline

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
async def started(kind: LLMKind) -> AsyncIterator[Provider]:
    """The fake of ``kind`` playing ``SCRIPT``, and pipecat's real service on it."""
    async with s2s_provider(kind.value, SCRIPT, instruction="Base.", tools=tools(WEATHER)) as (
        fake,
        llm,
    ):
        notes = lambda: notes_received(kind.value, fake)  # noqa: E731
        outputs = lambda: tool_outputs_received(kind.value, fake)  # noqa: E731
        yield Provider(llm, notes, outputs, fake.settler(llm))


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
    async with started(kind) as provider:
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

    async with started(kind) as provider:
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
