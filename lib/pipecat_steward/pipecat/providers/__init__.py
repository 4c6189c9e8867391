"""Provider adapters: one class per kind of pipecat LLM service the steward can steer.

``adapter_for(llm)`` chooses the adapter once, from the service's class; the steward then asks
the adapter what the service can do (``channels``) and lets it do it. Adding a provider is one
adapter module here (registered in ``SPEECH_TO_SPEECH``), one fake server in
``pipecat_steward.testing.servers`` and one row in ``docs/providers.md``.
"""

from __future__ import annotations

from typing import Any

from pipecat_steward.pipecat.providers.base import Channels, LLMKind, ProviderAdapter
from pipecat_steward.pipecat.providers.cascaded import CascadedAdapter
from pipecat_steward.pipecat.providers.gemini_live import GeminiLiveAdapter
from pipecat_steward.pipecat.providers.nova_sonic import NovaSonicAdapter
from pipecat_steward.pipecat.providers.openai_realtime import OpenAIRealtimeAdapter

__all__ = [
    "ADAPTERS",
    "SPEECH_TO_SPEECH",
    "CascadedAdapter",
    "Channels",
    "GeminiLiveAdapter",
    "LLMKind",
    "NovaSonicAdapter",
    "OpenAIRealtimeAdapter",
    "ProviderAdapter",
    "adapter_class",
    "adapter_for",
]

SPEECH_TO_SPEECH: tuple[type[ProviderAdapter], ...] = (
    OpenAIRealtimeAdapter,
    GeminiLiveAdapter,
    NovaSonicAdapter,
)
"""The speech-to-speech adapters, tried in order against the service's class."""

ADAPTERS: dict[LLMKind, type[ProviderAdapter]] = {
    adapter.kind: adapter for adapter in (CascadedAdapter, *SPEECH_TO_SPEECH)
}
"""Every adapter by the LLM family it serves."""


def adapter_class(llm: Any) -> type[ProviderAdapter]:
    """The adapter for ``llm``'s class: a speech-to-speech one that serves it, else cascaded."""
    return next((a for a in SPEECH_TO_SPEECH if a.serves(llm)), CascadedAdapter)


def adapter_for(llm: Any) -> ProviderAdapter:
    """Adapt ``llm`` (see ``adapter_class``)."""
    return adapter_class(llm)(llm)
