"""The JSON Schema of ``agent.yaml`` and its Markdown reference, from the loader's own models.

Both are generated from :class:`~pipecat_steward.agent.config.AgentConfig` (the model the
loader validates every file with) and the texts of :mod:`.reference_docs`, so the reference
always lists exactly the keys, types and defaults the loader accepts.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from enum import Enum
from typing import Any, cast

from pydantic import BaseModel

from pipecat_steward.agent.config import AgentConfig
from pipecat_steward.agent.reference_docs import FIELDS, SECTIONS
from pipecat_steward.agent.reference_prose import EPILOGUE, PROLOGUE

__all__ = ["agent_schema", "models", "reference_markdown", "undocumented"]

SCHEMA_ID = "https://json-schema.org/draft/2020-12/schema"
Schema = dict[str, Any]


def models() -> dict[str, type[BaseModel]]:
    """Every model reachable from ``AgentConfig``, by name, in first-seen order."""
    found: dict[str, type[BaseModel]] = {}
    queue: list[type[BaseModel]] = [AgentConfig]
    while queue:
        model = queue.pop(0)
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        for info in model.model_fields.values():
            queue += [t for t in _types(info.annotation) if t.__name__ not in found]
    return found


def _types(annotation: object) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _types(arg)


def undocumented() -> list[str]:
    """``Model.field`` for every key without a text in the reference (should be empty)."""
    missing = [name for name in models() if name not in SECTIONS]
    for name, model in models().items():
        missing += [f"{name}.{f}" for f in model.model_fields if f not in FIELDS.get(name, {})]
    return missing


def agent_schema() -> Schema:
    """The JSON Schema (draft 2020-12) of ``agent.yaml``, with a description on every key."""
    schema = AgentConfig.model_json_schema()
    defs = cast(dict[str, Schema], schema.get("$defs", {}))
    _describe(schema, "AgentConfig")
    for name, body in defs.items():
        _describe(body, name)
    _readback_pattern(defs["SlotConfig"]["properties"]["readback_fmt"])
    return {"$schema": SCHEMA_ID, **schema, "title": "agent.yaml"}


def _describe(body: Schema, name: str) -> None:
    body.pop("description", None)  # the models' docstrings speak to maintainers
    if name in SECTIONS:
        body["description"] = SECTIONS[name]
    for key, prop in cast(dict[str, Schema], body.get("properties", {})).items():
        prop.pop("title", None)
        if key in FIELDS.get(name, {}):
            prop["description"] = FIELDS[name][key]


def _readback_pattern(prop: Schema) -> None:
    """Editors flag what the loader rejects: a string must be date, time or hold {value}."""
    for branch in cast(list[Schema], prop["anyOf"]):
        if branch.get("type") == "string":
            branch["pattern"] = r"^(date|time)$|^(?!\s*lambda).*\{value\}"


def reference_markdown() -> str:
    """``docs/agent-yaml.md``: the prose, one table per section, the contracts."""
    schema = agent_schema()
    defs = cast(dict[str, Schema], schema["$defs"])
    places = _places(schema, defs)
    parts = [PROLOGUE.strip(), ""]
    for name, model in models().items():
        parts += _section(name, model, {**defs, "__root__": schema}, places)
    parts += [EPILOGUE.strip(), ""]
    return "\n".join(parts)


def _places(schema: Schema, defs: dict[str, Schema]) -> dict[str, list[str]]:
    """Where each section appears in a file, e.g. ``SlotConfig`` → ``flow.slots[]``."""
    places: dict[str, list[str]] = {}
    queue: list[tuple[str, Schema]] = [("", schema)]
    while queue:
        prefix, body = queue.pop(0)
        for key, prop in cast(dict[str, Schema], body.get("properties", {})).items():
            for ref, suffix in _refs(prop):
                path = f"{prefix}{key}{suffix}"
                if ref in defs and "properties" in defs[ref]:
                    known = places.setdefault(ref, [])
                    if path not in known and len(known) < 2:
                        known.append(path)
                        queue.append((f"{path}.", defs[ref]))
    return places


def _refs(prop: Schema, suffix: str = "") -> Iterator[tuple[str, str]]:
    if "$ref" in prop:
        yield str(prop["$ref"]).rsplit("/", 1)[-1], suffix
    for branch in cast(list[Schema], prop.get("anyOf", []) + prop.get("oneOf", [])):
        yield from _refs(branch, suffix)
    if isinstance(prop.get("items"), dict):
        yield from _refs(cast(Schema, prop["items"]), f"{suffix}[]")
    if isinstance(prop.get("additionalProperties"), dict):
        yield from _refs(cast(Schema, prop["additionalProperties"]), f"{suffix}.<name>")


def _section(
    name: str, model: type[BaseModel], defs: dict[str, Schema], places: dict[str, list[str]]
) -> list[str]:
    body = defs.get(name, {}) if name != "AgentConfig" else defs["__root__"]
    where = ", ".join(f"`{p}`" for p in places[name]) if name in places else "Top level"
    kind = _kind(defs.get(name, {}))
    where += f" with `kind: {kind}`" if kind else ""
    lines = [f'<a id="{name.lower()}"></a>', f"## {where}", "", SECTIONS.get(name, ""), ""]
    lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
    props = cast(dict[str, Schema], body.get("properties", {}))
    for key, info in model.model_fields.items():
        default = (
            "**required**"
            if info.is_required()
            else _default(info.get_default(call_default_factory=True))
        )
        text = FIELDS.get(name, {}).get(key, "")
        kind = _type(props.get(key, {}), defs, places)
        lines.append(f"| `{key}` | {kind} | {default} | {_cell(text)} |")
    return [*lines, ""]


def _default(value: object) -> str:
    if isinstance(value, BaseModel):
        return "(defaults)"
    if isinstance(value, Enum):
        value = value.value
    if value in (None, "", [], {}, ()):
        return "" if value is None else f"`{json.dumps(value)}`"
    return _cell(f"`{json.dumps(value, ensure_ascii=False)}`")


def _type(prop: Schema, defs: dict[str, Schema], places: dict[str, list[str]]) -> str:
    if "$ref" in prop:
        return _named(str(prop["$ref"]).rsplit("/", 1)[-1], defs, places)
    branches = cast(list[Schema], prop.get("anyOf", []) + prop.get("oneOf", []))
    if branches:
        named = [_type(b, defs, places) for b in branches if b.get("type") != "null"]
        return " or ".join(dict.fromkeys(named))
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in cast(list[object], prop["enum"]))
    kind = prop.get("type")
    if kind == "array":
        return f"list of {_type(cast(Schema, prop.get('items', {})), defs, places)}"
    if kind == "object":
        inner = prop.get("additionalProperties")
        if isinstance(inner, dict):
            return f"mapping of {_type(cast(Schema, inner), defs, places)}"
        return "mapping"
    return str(kind) if kind else "any"


def _named(ref: str, defs: dict[str, Schema], places: dict[str, list[str]]) -> str:
    if ref == "JsonValue":
        return "any"
    if "enum" in defs.get(ref, {}):
        return _type({"enum": defs[ref]["enum"]}, defs, places)
    kind = _kind(defs.get(ref, {}))
    return f"[{f'`kind: {kind}`' if kind else 'mapping'}](#{ref.lower()})"


def _kind(body: Schema) -> str | None:
    """The tag of one branch of a tagged union (``complete_when: {kind: tool, …}``)."""
    kind = cast(Schema, body.get("properties", {})).get("kind", {})
    value = kind.get("const", (kind.get("enum") or [None])[0])
    return str(value) if value is not None else None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
