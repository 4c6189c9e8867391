"""Offline fakes of the LLM providers pipecat talks to, for tests.

Each one is scripted with the same `Say`/`Call` steps as `ScriptedLLM`, records what the
client sent, and is an async context manager that listens on a free 127.0.0.1 port (Nova
Sonic: an in-memory stream) and stops cleanly.
"""

from pipecat_steward.testing.servers.chat_completions import (
    ChatCompletionsServer,
    tool_ordering_error,
)
from pipecat_steward.testing.servers.gemini_live import GeminiLiveServer, gemini_live_service
from pipecat_steward.testing.servers.nova_sonic import NovaSonicFake, nova_sonic_service
from pipecat_steward.testing.servers.openai_realtime import RealtimeServer

__all__ = [
    "ChatCompletionsServer",
    "GeminiLiveServer",
    "NovaSonicFake",
    "RealtimeServer",
    "gemini_live_service",
    "nova_sonic_service",
    "tool_ordering_error",
]
