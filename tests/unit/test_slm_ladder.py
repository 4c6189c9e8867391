"""The resolution ladder: precedence, provider switches, per-scope overrides, named errors."""

from __future__ import annotations

from typing import Any

import pytest

from pipecat_steward.exceptions import ConfigError, SLMResolutionError
from pipecat_steward.slm import (
    DEFAULT_PROMPTS,
    SessionIdentity,
    StackManifest,
    load_builtin_table,
    load_stack,
    resolve_stage,
)

TABLE = load_builtin_table()


def test_built_in_table_fills_what_the_stack_leaves_unset() -> None:
    """The openai stack names the model; timeouts and limits come from the built-in table."""
    stage = resolve_stage(table=TABLE, stack=load_stack("openai"))
    assert (stage.provider, stage.model, stage.stage_id) == ("openai", "gpt-4o-mini", "__logic_slm")
    assert stage.timeout_s == 8.0 and stage.max_output_tokens == 512
    assert stage.sources["model"] == "stack 'openai' (aux.logic_slm)"
    assert stage.sources["timeout_s"] == "built-in table (openai)"


def test_precedence_overlay_then_stack_then_tenant_then_table() -> None:
    """Each field comes from the highest rung that sets it."""
    stage = resolve_stage(
        table=TABLE,
        overlay={"config": {"model": "gpt-4.1-mini"}},
        stack=load_stack("openai"),
        tenant={"config": {"model": "gpt-4.1-nano", "timeout_s": 3.0, "temperature": 0.2}},
    )
    assert stage.model == "gpt-4.1-mini"
    assert stage.timeout_s == 3.0  # tenant beats the built-in table
    assert stage.sources["temperature"] == "tenant aux services"


def test_owner_provider_selects_the_built_in_entry() -> None:
    """A stack without aux provider falls back to its owner provider's table entry."""
    stack = StackManifest.model_validate(
        {"name": "bare", "owner_provider": "bedrock", "aux": {"logic_slm": {}}}
    )
    stage = resolve_stage(table=TABLE, stack=stack)
    assert (stage.provider, stage.model, stage.region) == (
        "bedrock",
        "amazon.nova-micro-v1:0",
        "us-east-1",
    )


def test_a_rung_naming_another_provider_is_skipped_whole() -> None:
    """Switching provider in the overlay drops the stack's settings for the old provider."""
    stage = resolve_stage(
        table=TABLE,
        overlay={"provider": "google"},
        stack=load_stack("self-hosted"),
    )
    assert (stage.provider, stage.model, stage.base_url) == (
        "google",
        "gemini-2.5-flash-lite",
        None,
    )


def test_self_hosted_stack() -> None:
    """The self-hosted stack is OpenAI-compatible with a base_url and no built-in entry."""
    stage = resolve_stage(table=TABLE, stack=load_stack("self-hosted"))
    assert stage.provider == "openai_compatible"
    assert stage.base_url == "http://127.0.0.1:8000/v1"
    assert stage.self_hosted and stage.structured_mode == "auto"


def test_per_scope_models_and_prompts_inherit_scope_by_scope() -> None:
    """Overrides replace per scope; unset scopes keep the lower rung or the catalog default."""
    stage = resolve_stage(
        table=TABLE,
        overlay={"config": {"scope_models": {"adherence": "gpt-4.1-mini"}}},
        stack=load_stack("openai"),
        tenant={
            "config": {
                "scope_models": {"adherence": "ignored", "llm_judge": "gpt-4.1-nano"},
                "prompt_overrides": {"extraction": "Tenant extraction prompt."},
            }
        },
    )
    assert stage.model_for("adherence") == "gpt-4.1-mini"
    assert stage.model_for("llm_judge") == "gpt-4.1-nano"
    assert stage.model_for("extraction") == "gpt-4o-mini"
    assert stage.prompts["extraction"] == "Tenant extraction prompt."
    assert stage.prompts["adherence"] == DEFAULT_PROMPTS["adherence"]
    assert stage.sources["prompt.extraction"] == "tenant aux services"
    assert "prompt.adherence" not in stage.sources


def test_stage_is_immutable_and_carries_identity() -> None:
    """One frozen value per session, with the ids usage rows need."""
    ident = SessionIdentity(tenant_id="t", agent_id="a", session_id="s")
    stage = resolve_stage(table=TABLE, stack=load_stack("openai"), identity=ident)
    assert stage.identity == ident
    with pytest.raises(Exception, match="frozen"):
        stage.model = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "missing"),
    [
        ({}, "no provider resolved"),
        ({"stack": "vertex"}, "project not set"),
        ({"overlay": {"provider": "openai_compatible"}}, "model, base_url not set"),
        (
            {"overlay": {"provider": "openai_compatible", "config": {"model": "m"}}},
            "base_url not set",
        ),
    ],
)
def test_resolution_errors_name_what_is_missing(kwargs: dict[str, Any], missing: str) -> None:
    """Errors say what is missing, which rungs were consulted and what to set."""
    if "stack" in kwargs:
        kwargs["stack"] = load_stack(kwargs["stack"])
    with pytest.raises(SLMResolutionError, match=missing) as info:
        resolve_stage(table=TABLE, **kwargs)
    assert "config.aux.logic_slm" in str(info.value)


def test_vertex_resolves_with_project_or_api_key() -> None:
    """Vertex needs a project (ADC) unless an API key variable selects express mode."""
    vertex = load_stack("vertex")
    assert resolve_stage(table=TABLE, stack=vertex, tenant={"config": {"project": "p"}}).project
    express = resolve_stage(table=TABLE, stack=vertex, overlay={"config": {"api_key_env": "K"}})
    assert express.api_key_env == "K"


def test_malformed_overlay_names_the_path_and_fix() -> None:
    """A bad overlay is a ConfigError at its path, not a resolution surprise later."""
    with pytest.raises(ConfigError, match=r"config\.aux\.logic_slm:config\.structured_mode"):
        resolve_stage(table=TABLE, overlay={"config": {"structured_mode": "yaml"}})
    with pytest.raises(ConfigError, match="tenant aux_services.logic_slm:provider"):
        resolve_stage(table=TABLE, tenant={"provider": "anthropic"})


def test_unknown_stack_lists_known_ones() -> None:
    """Asking for a stack that does not exist names the ones that do."""
    with pytest.raises(ConfigError, match="known stacks: bedrock, google, openai"):
        load_stack("azure")
