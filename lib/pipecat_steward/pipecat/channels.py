"""How the steward can reach each kind of LLM: the delivery channels, read from the adapters.

Each provider adapter (``pipecat_steward.pipecat.providers``) owns its row; this module is the
table view of them, for code and tests that only ask what a service can do. See
``docs/providers.md`` for what each channel means per provider.
"""

from __future__ import annotations

from typing import Any

from pipecat_steward.pipecat.providers import ADAPTERS, adapter_class
from pipecat_steward.pipecat.providers.base import Channels, LLMKind

__all__ = ["CHANNELS", "Channels", "LLMKind", "channels_for", "detect_kind"]

CHANNELS: dict[LLMKind, Channels] = {kind: adapter.channels for kind, adapter in ADAPTERS.items()}
"""Every LLM family's channel row, from its adapter."""


def detect_kind(llm_service: Any) -> LLMKind:
    """Classify a pipecat LLM service by its adapter (chosen from the service's class)."""
    return adapter_class(llm_service).kind


def channels_for(llm_service: Any) -> Channels:
    """Return the channel row of `llm_service`'s adapter."""
    return adapter_class(llm_service).channels
