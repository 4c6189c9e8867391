"""Schema normalisation per provider, JSON parsing and validation of results."""

from __future__ import annotations

from typing import Any

import pytest

from pipecat_steward.exceptions import SLMOutputError
from pipecat_steward.slm import gemini_schema, strict_schema, validate_result
from pipecat_steward.slm.schemas import parse_json_object

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "title": "Booking",
    "properties": {
        "date": {"type": "string", "description": "ISO date", "default": "today"},
        "party": {"type": "integer"},
        "seating": {"enum": ["inside", "outside"]},
        "guests": {
            "type": "array",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
        "note": {"type": ["string", "null"]},
    },
    "required": ["date"],
}


def test_strict_requires_every_property_and_closes_objects() -> None:
    out = strict_schema(SCHEMA)
    assert out["required"] == ["date", "party", "seating", "guests", "note"]
    assert out["additionalProperties"] is False
    nested = out["properties"]["guests"]["items"]
    assert nested["required"] == ["name"] and nested["additionalProperties"] is False


def test_strict_makes_optional_properties_nullable() -> None:
    props = strict_schema(SCHEMA)["properties"]
    assert props["date"]["type"] == "string"  # required stays non-null
    assert props["party"]["type"] == ["integer", "null"]
    assert props["seating"] == {"enum": ["inside", "outside", None], "type": ["string", "null"]}
    assert props["guests"]["type"] == ["array", "null"]
    assert props["note"]["type"] == ["string", "null"]  # already nullable: unchanged


def test_strict_drops_keywords_strict_mode_rejects_and_keeps_order() -> None:
    out = strict_schema(SCHEMA)
    assert "$schema" not in out and "title" not in out
    assert "default" not in out["properties"]["date"]
    assert out["properties"]["date"]["description"] == "ISO date"
    assert list(out["properties"]) == ["date", "party", "seating", "guests", "note"]


def test_strict_does_not_mutate_its_input() -> None:
    before = repr(SCHEMA)
    strict_schema(SCHEMA)["properties"]["date"]["type"] = "mutated"
    assert repr(SCHEMA) == before
    assert strict_schema(SCHEMA)["properties"]["date"]["type"] == "string"


def test_untyped_optional_becomes_any_of_null() -> None:
    out = strict_schema({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}]}}})
    assert out["properties"]["x"] == {"anyOf": [{"anyOf": [{"type": "string"}]}, {"type": "null"}]}


def test_gemini_schema_speaks_the_openapi_subset() -> None:
    out = gemini_schema(SCHEMA)
    assert out["type"] == "OBJECT"
    assert out["propertyOrdering"] == ["date", "party", "seating", "guests", "note"]
    assert out["properties"]["party"] == {"type": "INTEGER", "nullable": True}
    assert out["properties"]["seating"] == {
        "type": "STRING",
        "nullable": True,
        "enum": ["inside", "outside"],
    }
    name = out["properties"]["guests"]["items"]["properties"]["name"]
    assert name == {"type": "STRING", "nullable": True}
    assert "additionalProperties" not in out


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  ```json\n{"a": 1}\n```  ', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
    ],
)
def test_parse_json_object(text: str, value: dict[str, Any]) -> None:
    assert parse_json_object(text) == value


@pytest.mark.parametrize("text", ["", "{", "[1]", '"a"', "ALLOW"])
def test_parse_rejects_non_objects(text: str) -> None:
    with pytest.raises(SLMOutputError):
        parse_json_object(text)


def test_validate_result_names_the_failing_path() -> None:
    strict = strict_schema(SCHEMA)
    ok = {"date": "2026-09-03", "party": None, "seating": None, "guests": None, "note": None}
    validate_result(ok, strict)
    with pytest.raises(SLMOutputError, match="at guests/0/name"):
        validate_result({**ok, "guests": [{"name": 3}]}, strict)


def test_an_invalid_requested_schema_is_an_output_error() -> None:
    with pytest.raises(SLMOutputError, match="schema is itself invalid"):
        validate_result({}, {"type": "no-such-type"})
