"""Values passed between the client and the provider modules, and the result callers get."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pipecat_steward.core.costing import Scope
from pipecat_steward.slm.config import Provider, SLMStage

__all__ = ["SLMProvider", "ProviderReply", "ProviderRequest", "SLMResult", "Usage"]


@dataclass(frozen=True)
class Usage:
    """Tokens the provider reported for one call (0 when it reported none)."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, kw_only=True)
class ProviderRequest:
    """One call as a provider module sees it.

    Attributes:
        schema: The normalised (strict) schema, or ``None`` for a plain-text call.

    """

    stage: SLMStage
    model: str
    system: str
    user: str
    schema: Mapping[str, Any] | None
    timeout: float


@dataclass(frozen=True, kw_only=True)
class ProviderReply:
    """What a provider module returns: the model's text and the usage it reported."""

    text: str
    usage: Usage
    mode: str
    """How structure was requested: ``json_schema``, ``json_object``, ``tool``, ``text`` …"""


class SLMProvider(Protocol):
    """One provider module's endpoint client (one instance per endpoint, reused)."""

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """Make the call; raise only ``SLMError`` subclasses for known failures."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True, kw_only=True)
class SLMResult:
    """A schema-valid structured result.

    Attributes:
        value: The parsed object, valid against the normalised schema.
        raw_text: The model's text exactly as received.
        latency_ms: Wall time of the call, measured by the client's clock.

    """

    value: Mapping[str, Any]
    raw_text: str
    usage: Usage
    latency_ms: float
    provider: Provider
    model: str
    scope: Scope
    mode: str
