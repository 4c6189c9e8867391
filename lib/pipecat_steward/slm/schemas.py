"""JSON-schema normalisation per provider, and validation of every result.

Strict structured output (OpenAI ``json_schema`` strict, and what we ask of every provider)
requires every property to be listed in ``required`` and ``additionalProperties: false``, so
a property the caller left optional becomes required-but-nullable (``["type", "null"]``):
absence is expressed as ``null``. Results are validated against that normalised schema, the
one the model was shown. Gemini's ``response_schema`` speaks an OpenAPI subset instead, so
:func:`gemini_schema` rewrites type arrays to ``nullable``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from pipecat_steward.exceptions import SLMOutputError

__all__ = ["gemini_schema", "parse_json_object", "strict_schema", "validate_result"]

_DROP = ("default", "$schema", "title")
_CHILD_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_CHILD_MAPS = ("properties", "$defs", "definitions", "patternProperties")

JSON = dict[str, Any]


def _key(schema: Mapping[str, Any]) -> str:
    """Return a text key for caching per schema (order kept: property order reaches the model)."""
    return json.dumps(schema, separators=(",", ":"))


def strict_schema(schema: Mapping[str, Any]) -> JSON:
    """Return the strict-mode form of ``schema`` (a new object; the input is not changed)."""
    return copy.deepcopy(_strict_cached(_key(schema)))


@lru_cache(maxsize=256)
def _strict_cached(key: str) -> JSON:
    """Normalise once per distinct schema; the hot path hits this cache."""
    return _strict(json.loads(key))


def _strict(node: JSON) -> JSON:
    """Normalise one schema node and its children."""
    out = {k: v for k, v in node.items() if k not in _DROP}
    for name in _CHILD_MAPS:
        if isinstance(out.get(name), dict):
            out[name] = {k: _strict(v) for k, v in out[name].items()}
    for name in _CHILD_LISTS:
        if isinstance(out.get(name), list):
            out[name] = [_strict(v) for v in out[name]]
    if isinstance(out.get("items"), dict):
        out["items"] = _strict(out["items"])
    if "type" not in out and _enum_type(out):
        out["type"] = _enum_type(out)  # strict mode and Gemini both want a typed enum
    if "properties" in out:
        _close_object(out)
    return out


def _close_object(node: JSON) -> None:
    """Require every property and forbid others; formerly optional ones become nullable."""
    required = set(node.get("required", []))
    properties: JSON = node["properties"]
    node["properties"] = {
        name: sub if name in required else _nullable(sub) for name, sub in properties.items()
    }
    node["required"] = list(properties)
    node["additionalProperties"] = False
    node.setdefault("type", "object")


def _enum_type(node: JSON) -> str | None:
    """Return the JSON type shared by every enum value (``None`` when mixed or no enum)."""
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    kinds = {names.get(type(v)) for v in node.get("enum", []) if v is not None}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None


def _nullable(node: JSON) -> JSON:
    """Allow ``null`` for ``node`` (type arrays; enums gain ``None``; otherwise ``anyOf``)."""
    out = dict(node)
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind] if kind == "null" else [kind, "null"]
    elif isinstance(kind, list):
        kinds = cast(list[str], kind)
        out["type"] = kinds if "null" in kinds else [*kinds, "null"]
    else:
        return {"anyOf": [out, {"type": "null"}]}
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def gemini_schema(schema: Mapping[str, Any]) -> JSON:
    """Return ``schema`` (already strict) in the OpenAPI subset Gemini's ``response_schema`` takes."""
    return _gemini(strict_schema(schema))


def _gemini(node: JSON) -> JSON:
    """Rewrite one node: single upper-case type plus ``nullable``, ordered properties."""
    out: JSON = {}
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else list(cast(list[str], kind or []))
    real = [k for k in kinds if k != "null"]
    if real:
        out["type"] = real[0].upper()
    if "null" in kinds or None in node.get("enum", []):
        out["nullable"] = True
    for name in ("description", "format", "minimum", "maximum", "minItems", "maxItems"):
        if name in node:
            out[name] = node[name]
    if "enum" in node:
        out["enum"] = [str(v) for v in node["enum"] if v is not None]
    if "properties" in node:
        out["properties"] = {k: _gemini(v) for k, v in node["properties"].items()}
        out["required"] = list(node["properties"])
        out["propertyOrdering"] = list(node["properties"])
    if isinstance(node.get("items"), dict):
        out["items"] = _gemini(node["items"])
    if "anyOf" in node:
        out["anyOf"] = [_gemini(v) for v in node["anyOf"] if v != {"type": "null"}]
        out["nullable"] = out.get("nullable", False) or {"type": "null"} in node["anyOf"]
    return out


def parse_json_object(text: str) -> JSON:
    """Parse a model's reply as one JSON object, tolerating a Markdown code fence around it.

    Raises:
        SLMOutputError: The text is not a JSON object.

    """
    body = text.strip()
    if body.startswith("```"):
        # Small models in json_object mode sometimes fence the object; the object is intact.
        body = body.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError as err:
        raise SLMOutputError(f"output is not valid JSON ({err.msg} at char {err.pos})") from None
    if not isinstance(value, dict):
        raise SLMOutputError(f"output is JSON but not an object: {type(value).__name__}")
    return cast(JSON, value)


def validate_result(value: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """Check ``value`` against ``schema`` (the normalised one the model was given).

    Raises:
        SLMOutputError: The value does not match; the message names the first failing path.

    """
    validator = _validator(_key(schema))
    error = next(iter(validator.iter_errors(value)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise SLMOutputError(f"output does not match the schema at {where}: {error.message}")


@lru_cache(maxsize=256)
def _validator(key: str) -> Draft202012Validator:
    """Build (once per schema) a validator; a broken schema is the caller's output error."""
    schema = json.loads(key)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as err:
        raise SLMOutputError(f"the requested schema is itself invalid: {err.message}") from None
    return Draft202012Validator(schema)
