"""Each speech-to-speech provider fake with pipecat's real service on it, started one way."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema

from pipecat_steward.testing import (
    GeminiLiveServer,
    NovaSonicFake,
    RealtimeServer,
    gemini_live_service,
    nova_sonic_service,
)
from pipecat_steward.testing.script import Step
from pipecat_steward.testing.simulate_s2s import realtime_service

S2S_KINDS = ("openai_realtime", "gemini_live", "nova_sonic")

GENAI_3_WARNING = pytest.mark.filterwarnings(
    "ignore:Setting `LiveConnectConfig.generation_config` is deprecated"
)
"""google-genai 3.x warns that pipecat still sets ``LiveConnectConfig.generation_config``; as an
error it would abort the Gemini connection, so only that message is ignored, only for Gemini."""


@asynccontextmanager
async def s2s_provider(
    kind: str,
    script: Sequence[Step],
    *,
    instruction: str,
    tools: ToolsSchema,
    latency: float = 0.0,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the fake of ``kind`` (one of ``S2S_KINDS``) and pipecat's real service on it.

    Yields the fake and the service. Every service answers only when asked to: the Realtime
    service's turn detection creates no response of its own, as the other two create none in
    text mode.
    """
    if kind == "openai_realtime":
        async with RealtimeServer(list(script), latency=latency) as fake:
            yield fake, realtime_service(fake, instruction, tools=tools)
    elif kind == "gemini_live":
        from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService

        async with GeminiLiveServer(list(script), latency=latency) as fake:
            settings = GeminiLiveLLMService.Settings(system_instruction=instruction)
            yield fake, gemini_live_service(fake, settings=settings, tools=tools)
    elif kind == "nova_sonic":
        pytest.importorskip("aws_sdk_bedrock_runtime", reason="Nova Sonic needs Python >= 3.12")
        from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService

        async with NovaSonicFake(list(script), latency=latency) as fake:
            settings = AWSNovaSonicLLMService.Settings(system_instruction=instruction)
            yield fake, nova_sonic_service(fake, settings=settings, tools=tools)
    else:
        raise ValueError(f"unknown speech-to-speech kind {kind!r}; expected one of {S2S_KINDS}")


def notes_received(kind: str, fake: Any) -> list[str]:
    """The texts the fake of ``kind`` received from the client (notes, injected turns)."""
    if kind == "openai_realtime":
        items = [e["item"] for e in fake.of_type("conversation.item.create")]
        return [c["text"] for i in items if i["type"] == "message" for c in i["content"]]
    if kind == "gemini_live":
        return fake.texts()
    return [text for text, _ in fake.texts()]


def tool_outputs_received(kind: str, fake: Any) -> list[str]:
    """The JSON text of each tool result the fake of ``kind`` received."""
    if kind == "openai_realtime":
        items = [e["item"] for e in fake.of_type("conversation.item.create")]
        return [i["output"] for i in items if i["type"] == "function_call_output"]
    if kind == "gemini_live":
        return [json.dumps(r["response"]) for r in fake.tool_responses()]
    return fake.tool_results()
