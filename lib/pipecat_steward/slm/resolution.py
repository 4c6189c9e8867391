"""The logic_slm resolution ladder.

Precedence, highest first: the stage's ``config.aux.logic_slm`` overlay, the stack manifest's
``aux.logic_slm``, the tenant's aux services, then the built-in table keyed by provider. The
highest rung that names a provider decides it; rungs naming another provider are skipped whole
(their settings belong to another service). Every other field comes from the highest rung that
sets it; per-scope models and prompts inherit scope by scope. The result is one immutable
:class:`SLMStage`, resolved once per session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from pipecat_steward.core.costing import Scope
from pipecat_steward.exceptions import SLMResolutionError
from pipecat_steward.slm.config import AuxEntry, Provider, SessionIdentity, SLMStage
from pipecat_steward.slm.manifests import BuiltinTable, StackManifest, validation_error
from pipecat_steward.slm.prompts import effective_prompts

__all__ = ["Rung", "parse_entry", "resolve_stage"]

_SCALARS = (
    "model",
    "base_url",
    "api_key_env",
    "region",
    "project",
    "location",
    "structured_mode",
    "bedrock_mode",
    "extra_body",
    "max_output_tokens",
    "temperature",
    "timeout_s",
    "self_hosted",
)


@dataclass(frozen=True)
class Rung:
    """One rung of the ladder: where it came from and its entry."""

    source: str
    entry: AuxEntry


def parse_entry(data: AuxEntry | Mapping[str, Any] | None, source: str) -> AuxEntry | None:
    """Validate a raw ``logic_slm`` entry, naming ``source`` and the bad field on error."""
    if data is None or isinstance(data, AuxEntry):
        return data
    try:
        return AuxEntry.model_validate(data)
    except ValidationError as err:
        raise validation_error(source, err, "see docs/slm.md for the entry's fields") from None


def resolve_stage(
    *,
    table: BuiltinTable,
    overlay: AuxEntry | Mapping[str, Any] | None = None,
    stack: StackManifest | None = None,
    tenant: AuxEntry | Mapping[str, Any] | None = None,
    identity: SessionIdentity | None = None,
) -> SLMStage:
    """Resolve the logic_slm stage for one session.

    Args:
        table: The built-in table (``aux-services.json``).
        overlay: The stage's sparse ``config.aux.logic_slm`` overlay.
        stack: The stack manifest the agent runs on.
        tenant: The tenant's ``logic_slm`` aux service entry.
        identity: Tenant, agent and session ids copied onto usage rows.

    Returns:
        The immutable stage.

    Raises:
        SLMResolutionError: No provider, model or required endpoint setting; names what is
            missing and which rungs were consulted.
        ConfigError: A raw overlay or tenant entry is malformed.

    """
    rungs = _rungs(overlay, stack, tenant)
    provider = _provider(rungs, stack, table)
    builtin = table.logic_slm.get(provider) if provider != "openai_compatible" else None
    chain = [r for r in rungs if r.entry.provider in (None, provider)]
    if builtin is not None:
        chain.append(Rung(f"built-in table ({provider})", builtin))
    fields, sources = _merge_scalars(chain)
    consulted = ", ".join(r.source for r in chain) or "no rung"
    _require(provider, fields, consulted)
    prompts = effective_prompts(*(r.entry.config.prompt_overrides for r in chain))
    return SLMStage(
        provider=provider,
        **fields,
        scope_models=_merge_scopes(chain),
        prompts=prompts,
        identity=identity or SessionIdentity(),
        sources={
            "provider": _provider_source(chain, provider),
            **sources,
            **_prompt_sources(chain),
        },
    )


def _rungs(
    overlay: AuxEntry | Mapping[str, Any] | None,
    stack: StackManifest | None,
    tenant: AuxEntry | Mapping[str, Any] | None,
) -> list[Rung]:
    """Collect the configured rungs above the built-in table, highest first."""
    rungs: list[Rung] = []
    top = parse_entry(overlay, "config.aux.logic_slm")
    if top is not None:
        rungs.append(Rung("stage overlay (config.aux.logic_slm)", top))
    if stack is not None:
        rungs.append(Rung(f"stack {stack.name!r} (aux.logic_slm)", stack.aux.logic_slm))
    low = parse_entry(tenant, "tenant aux_services.logic_slm")
    if low is not None:
        rungs.append(Rung("tenant aux services", low))
    return rungs


def _provider(rungs: list[Rung], stack: StackManifest | None, table: BuiltinTable) -> Provider:
    """Pick the provider: the highest rung naming one, else the stack owner's table entry."""
    for rung in rungs:
        if rung.entry.provider is not None:
            return rung.entry.provider
    owner = stack.owner_provider if stack is not None else None
    entry = table.logic_slm.get(owner) if owner is not None else None
    if entry is not None and entry.provider is not None:
        return entry.provider
    if owner is not None:
        return owner
    raise SLMResolutionError(
        "logic_slm: no provider resolved — none of the stage overlay "
        "(config.aux.logic_slm.provider), the stack manifest or the tenant aux services names "
        "one, and no stack owner_provider selects a built-in entry; set one of them"
    )


def _merge_scalars(chain: list[Rung]) -> tuple[dict[str, Any], dict[str, str]]:
    """Take each field from the highest rung that sets it, remembering where it came from."""
    fields: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name in _SCALARS:
        for rung in chain:
            value = getattr(rung.entry.config, name)
            if value is not None:
                fields[name], sources[name] = value, rung.source
                break
    return fields, sources


def _merge_scopes(chain: list[Rung]) -> dict[Scope, str]:
    """Merge per-scope model overrides scope by scope (unset scopes inherit)."""
    merged: dict[Scope, str] = {}
    for rung in reversed(chain):
        merged.update(rung.entry.config.scope_models or {})
    return merged


def _prompt_sources(chain: list[Rung]) -> dict[str, str]:
    """Name the rung whose override each scope's prompt comes from (absent: catalog default)."""
    sources: dict[str, str] = {}
    for rung in reversed(chain):
        for scope, text in (rung.entry.config.prompt_overrides or {}).items():
            if text.strip():
                sources[f"prompt.{scope}"] = rung.source
    return sources


def _provider_source(chain: list[Rung], provider: Provider) -> str:
    """Name the rung that decided the provider."""
    named = [r.source for r in chain if r.entry.provider == provider]
    return named[0] if named else "stack owner_provider"


def _require(provider: Provider, fields: Mapping[str, Any], consulted: str) -> None:
    """Raise when a setting the provider needs was set by no rung."""
    missing = [name for name in _needed(provider, fields) if fields.get(name) is None]
    if missing:
        hints = ", ".join(f"config.aux.logic_slm.config.{name}" for name in missing)
        raise SLMResolutionError(
            f"logic_slm ({provider}): {', '.join(missing)} not set by any rung "
            f"(consulted: {consulted}); set {hints}"
        )


def _needed(provider: Provider, fields: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the settings ``provider`` cannot run without."""
    if provider == "openai_compatible":
        return ("model", "base_url")
    if provider == "bedrock":
        return ("model", "region")
    if provider == "vertex" and fields.get("api_key_env") is None:
        return ("model", "project", "location")
    return ("model",)
