"""Drift: every stack manifest, the built-in table and the price book match the JSON Schema,
load through the pydantic models, and the schema file and the models name the same fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from pipecat_steward.slm import (
    DEFINITIONS_DIR,
    STACKS_DIR,
    AuxEntryConfig,
    list_stacks,
    load_builtin_table,
    load_price_book,
    load_stack,
    resolve_stage,
)
from pipecat_steward.slm.manifests import OwnerProvider

SCHEMA_PATH = DEFINITIONS_DIR / "logic-slm.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
REGISTRY = Registry().with_resource("logic-slm.schema.json", Resource.from_contents(SCHEMA))


def validator(definition: str) -> Draft202012Validator:
    """A validator for one ``$defs`` entry of the schema file."""
    return Draft202012Validator(
        {"$ref": f"logic-slm.schema.json#/$defs/{definition}"}, registry=REGISTRY
    )


def errors(definition: str, path: Path) -> list[str]:
    data = json.loads(path.read_text())
    return [
        f"{list(e.absolute_path)}: {e.message}" for e in validator(definition).iter_errors(data)
    ]


def test_schema_file_is_valid_json_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", list_stacks())
def test_every_stack_manifest_matches_and_resolves(name: str) -> None:
    """Each stack validates, loads, and resolves (vertex once a project is supplied)."""
    assert errors("stackManifest", STACKS_DIR / f"{name}.json") == []
    stack = load_stack(name)
    assert stack.name == name
    tenant = {"config": {"project": "p"}} if name == "vertex" else None
    stage = resolve_stage(table=load_builtin_table(), stack=stack, tenant=tenant)
    assert stage.model


def test_the_stacks_the_issue_names_exist() -> None:
    assert {"openai", "google", "vertex", "bedrock", "self-hosted"} <= set(list_stacks())


def test_built_in_table_matches_and_covers_every_owner_provider() -> None:
    assert errors("auxServices", DEFINITIONS_DIR / "aux-services.json") == []
    table = load_builtin_table()
    assert set(table.logic_slm) == set(OwnerProvider.__args__)
    for owner, entry in table.logic_slm.items():
        assert entry.provider == owner and entry.config.model


def test_price_book_matches_and_prices_every_built_in_model() -> None:
    """The table's default models are priced, and self-hosted is an explicit zero with a note."""
    assert errors("priceBook", DEFINITIONS_DIR / "prices.json") == []
    book = load_price_book()
    for entry in load_builtin_table().logic_slm.values():
        assert entry.provider and entry.config.model
        assert book.lookup(entry.provider, entry.config.model) is not None, entry
    hosted = book.lookup("openai_compatible", "any-model")
    assert hosted is not None and hosted.input_per_million == 0 and hosted.note


def test_schema_file_and_pydantic_model_name_the_same_fields() -> None:
    """A field added to AuxEntryConfig must be added to the JSON Schema too (and back)."""
    in_schema = set(SCHEMA["$defs"]["auxEntryConfig"]["properties"])
    assert in_schema == set(AuxEntryConfig.model_fields)


def test_a_drifted_manifest_is_caught(tmp_path: Path) -> None:
    """The check has teeth: an unknown field or provider fails both validations."""
    bad = {"name": "x", "aux": {"logic_slm": {"provider": "anthropic", "config": {"modle": "m"}}}}
    (tmp_path / "x.json").write_text(json.dumps(bad))
    assert len(errors("stackManifest", tmp_path / "x.json")) >= 2
    with pytest.raises(Exception, match="x.json"):
        load_stack("x", tmp_path)
