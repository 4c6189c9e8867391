"""The logic_slm configuration: one sparse entry shape shared by every rung of the ladder.

The same :class:`AuxEntry` is read from a stage's ``config.aux.logic_slm`` overlay, a stack
manifest's ``aux.logic_slm``, a tenant's aux services and the built-in table; every field is
optional so an upper rung can set only what it changes. The resolved, immutable result is
:class:`SLMStage`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pipecat_steward.core.costing import LOGIC_SLM_STAGE_ID, Scope

__all__ = [
    "SCOPES",
    "AuxEntry",
    "AuxEntryConfig",
    "BedrockMode",
    "Provider",
    "SLMStage",
    "SessionIdentity",
    "StructuredMode",
]

Provider = Literal["openai", "openai_compatible", "google", "vertex", "bedrock"]
"""Closed vocabulary of providers; ``openai_compatible`` is vLLM / llama.cpp / Ollama."""

StructuredMode = Literal["json_schema", "json_object", "auto"]
"""How an OpenAI-compatible endpoint is asked for JSON.

``json_schema`` sends a strict schema; ``json_object`` asks for any JSON object and echoes the
schema in the prompt (also passed as ``response_format.schema``, which llama.cpp's server uses
for grammar-constrained decoding); ``auto`` tries ``json_schema`` and, if the endpoint rejects
it, falls back to ``json_object`` and remembers that for the endpoint.
"""

BedrockMode = Literal["tool", "output_config"]
"""Bedrock Converse structured output: forced tool use, or the ``outputConfig`` JSON schema."""

SCOPES: tuple[Scope, ...] = ("adherence", "extraction", "llm_judge")


class AuxEntryConfig(BaseModel):
    """The sparse settings of a logic_slm entry; unset fields inherit from lower rungs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = Field(default=None, min_length=1)
    base_url: str | None = Field(default=None, min_length=1)
    api_key_env: str | None = Field(default=None, min_length=1)
    region: str | None = Field(default=None, min_length=1)
    project: str | None = Field(default=None, min_length=1)
    location: str | None = Field(default=None, min_length=1)
    structured_mode: StructuredMode | None = None
    bedrock_mode: BedrockMode | None = None
    extra_body: Mapping[str, Any] | None = None
    max_output_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    timeout_s: float | None = Field(default=None, gt=0)
    scope_models: Mapping[Scope, str] | None = None
    """Per-scope model overrides, e.g. a larger model only for ``adherence``."""
    prompt_overrides: Mapping[Scope, str] | None = None
    """Per-scope instruction overrides; an unset scope keeps the catalog default."""
    self_hosted: bool | None = None
    """True for endpoints you run yourself; the forecast prices them at an explicit zero."""


class AuxEntry(BaseModel):
    """One rung's ``logic_slm`` entry: an optional provider and sparse settings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Provider | None = None
    config: AuxEntryConfig = Field(default_factory=AuxEntryConfig)
    note: str = ""


class SessionIdentity(BaseModel):
    """Who a call is made for; copied onto every usage row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: str = ""
    agent_id: str = ""
    session_id: str = ""


class SLMStage(BaseModel):
    """The resolved logic_slm stage: one immutable value per session.

    Attributes:
        provider: Which client module serves the stage.
        model: The default model; ``scope_models`` override it per scope.
        prompts: The effective instruction per scope (catalog default or override).
        sources: Which rung supplied each resolved field, for previews and errors.

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    stage_id: str = LOGIC_SLM_STAGE_ID
    provider: Provider
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    region: str | None = None
    project: str | None = None
    location: str | None = None
    structured_mode: StructuredMode = "json_schema"
    bedrock_mode: BedrockMode = "tool"
    extra_body: Mapping[str, Any] = Field(default_factory=dict)
    max_output_tokens: int = 512
    temperature: float = 0.0
    timeout_s: float = 8.0
    self_hosted: bool = False
    scope_models: Mapping[Scope, str] = Field(default_factory=dict)
    prompts: Mapping[Scope, str] = Field(default_factory=dict)
    identity: SessionIdentity = Field(default_factory=SessionIdentity)
    sources: Mapping[str, str] = Field(default_factory=dict)

    def model_for(self, scope: Scope) -> str:
        """Return the model serving ``scope`` (its override, else the stage model)."""
        return self.scope_models.get(scope, self.model)

    def endpoint_key(self) -> str:
        """Return a key naming the endpoint, for per-endpoint memory such as the JSON mode."""
        where = self.base_url or self.region or f"{self.project}/{self.location}"
        return f"{self.provider}|{where}"
