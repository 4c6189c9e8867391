"""Cascaded (text) LLMs with STT and TTS around them: OpenAI, Google, Bedrock … chat services.

Every inference passes through the service's ``process_frame``, so the steward's
before-inference hook sets the visible tools and the phase instruction on each one and can
preempt with an LLM-shaped reply: there is no session to update from outside. Notes are
context messages; an app-side interruption stops the bot.
"""

from __future__ import annotations

from pipecat_steward.pipecat.providers.base import Channels, LLMKind, ProviderAdapter

__all__ = ["CascadedAdapter"]


class CascadedAdapter(ProviderAdapter):
    """Any pipecat LLM service that no speech-to-speech adapter claims."""

    kind = LLMKind.CASCADED
    channels = Channels(
        kind=LLMKind.CASCADED,
        silent_note=True,
        instruction_update=True,  # per inference, by the hook
        tool_set_update=True,  # per inference, by the hook
        interrupt=True,
        per_inference_hook=True,
    )
    service = ("pipecat.services.llm_service", "LLMService")
