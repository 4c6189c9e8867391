"""Public test doubles for pipecat-steward users; everything here runs offline.

A scripted LLM service, local fakes of the LLM providers, and a text-mode pipeline runner.
"""

from pipecat_steward.testing.pipeline import (
    PlaybackTransport,
    TextPipeline,
    TextTTS,
    transcript_turn_strategies,
)
from pipecat_steward.testing.script import Call, Say, Step, split_step
from pipecat_steward.testing.scripted_llm import (
    CallOutcome,
    CallRecord,
    ContextSnapshot,
    FunctionStep,
    Inference,
    ScriptedLLM,
    ScriptItem,
    visible_tool_names,
)
from pipecat_steward.testing.servers import (
    ChatCompletionsServer,
    GeminiLiveServer,
    NovaSonicFake,
    RealtimeServer,
    nova_sonic_service,
)

__all__ = [
    "Call",
    "CallOutcome",
    "CallRecord",
    "ChatCompletionsServer",
    "ContextSnapshot",
    "FunctionStep",
    "GeminiLiveServer",
    "Inference",
    "NovaSonicFake",
    "PlaybackTransport",
    "RealtimeServer",
    "Say",
    "ScriptItem",
    "ScriptedLLM",
    "Step",
    "TextPipeline",
    "TextTTS",
    "nova_sonic_service",
    "split_step",
    "transcript_turn_strategies",
    "visible_tool_names",
]
