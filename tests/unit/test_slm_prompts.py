"""The prompt catalog: defaults, per-scope overrides, schema echo."""

from __future__ import annotations

import json

from pipecat_steward.slm import DEFAULT_PROMPTS, SCOPES, compose_system, effective_prompts


def test_catalog_has_every_scope() -> None:
    # The runtime consumers plus the authoring-time ``derive`` (steward derive).
    assert set(DEFAULT_PROMPTS) == {*SCOPES, "derive"}
    assert all(text.strip() for text in DEFAULT_PROMPTS.values())


def test_override_replaces_its_scope_only() -> None:
    out = effective_prompts(
        {"adherence": "Mine."}, None, {"adherence": "Lower.", "extraction": "X"}
    )
    assert out["adherence"] == "Mine."
    assert out["extraction"] == "X"
    assert out["llm_judge"] == DEFAULT_PROMPTS["llm_judge"]


def test_blank_override_inherits() -> None:
    assert effective_prompts({"extraction": "  "})["extraction"] == DEFAULT_PROMPTS["extraction"]


def test_compose_appends_the_schema() -> None:
    schema = {"type": "object", "properties": {"allow": {"type": "boolean"}}}
    text = compose_system("Decide.", schema)
    assert text.startswith("Decide.\n\n")
    assert json.dumps(schema, separators=(",", ":")) in text
