"""Gemini Live (``GeminiLiveLLMService``): tools and instruction fixed for the session.

- ``LLMSetToolsFrame`` is dropped and ``LLMUpdateSettingsFrame`` is stored but not sent: pass
  every tool to the constructor (``tools=steward.all_tools()``); a hidden tool is vetoed.
- Appended text is a ``user`` turn (``turnComplete`` false for a silent note, true to ask for
  a reply); the note prefix tells the model where it came from.
- An app-side interruption sends nothing: barge-in is decided by the server.
- The service answers the caller's audio by itself.
"""

from __future__ import annotations

from pipecat_steward.pipecat.providers.base import Channels, LLMKind, ProviderAdapter

__all__ = ["GeminiLiveAdapter"]


class GeminiLiveAdapter(ProviderAdapter):
    """The steward's view of a ``GeminiLiveLLMService``."""

    kind = LLMKind.GEMINI_LIVE
    channels = Channels(kind=LLMKind.GEMINI_LIVE, silent_note=True)
    service = ("pipecat.services.google.gemini_live.llm", "GeminiLiveLLMService")
