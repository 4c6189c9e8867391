"""Which variables the extractor may propose, and the schema and prompt it sends.

Eligible: ``extraction: true`` variables plus the current step's ``expects``, each described,
not sensitive and not linked. The schema is one object over them, every property typed
``[<type>, "null"]`` with the variable's description; the prompt says "not stated → null".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pipecat_steward.core.extraction.context import ExtractionContext
from pipecat_steward.core.variables import VariableSpec, VariableType

__all__ = ["build_schema", "eligible", "extraction_prompt"]

_JSON: Mapping[VariableType, str] = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "date": "string",
    "time": "string",
    "enum": "string",
    "list": "array",
}
_FORMAT: Mapping[VariableType, str] = {
    "date": " (an ISO date, YYYY-MM-DD)",
    "time": " (24-hour HH:MM)",
    "list": " (a list of short strings)",
}


def _allowed(spec: VariableSpec) -> bool:
    return bool(spec.description.strip()) and not spec.sensitive and not spec.linked


def eligible(
    specs: Sequence[VariableSpec], expects: Sequence[str] = ()
) -> tuple[VariableSpec, ...]:
    """The variables to extract: the step's ``expects`` first, then every ``extraction`` one.

    A variable without a description, a sensitive one and a linked one are never eligible
    (loading refuses a sensitive one marked for extraction; here they are left out).
    """
    by_name = {s.name: s for s in specs}
    wanted = [by_name[n] for n in expects if n in by_name]
    wanted += [s for s in specs if s.extraction]
    return tuple({s.name: s for s in wanted if _allowed(s)}.values())


def _property(spec: VariableSpec) -> dict[str, Any]:
    prop: dict[str, Any] = {
        "type": [_JSON[spec.type], "null"],
        "description": spec.description.strip() + _FORMAT.get(spec.type, ""),
    }
    if spec.type == "enum":
        prop["enum"] = [*spec.values, None]
    if spec.type == "list":
        prop["items"] = {"type": "string"}
    return prop


def build_schema(specs: Sequence[VariableSpec]) -> dict[str, Any]:
    """One strict object schema: every property required and nullable, nothing else allowed."""
    return {
        "type": "object",
        "properties": {s.name: _property(s) for s in specs},
        "required": [s.name for s in specs],
        "additionalProperties": False,
    }


def extraction_prompt(specs: Sequence[VariableSpec], context: ExtractionContext) -> str:
    """The user message: the fields, the caller's earlier words and the latest utterance."""
    fields = [f"- {s.name}: {_property(s)['description']}" for s in specs]
    earlier = [f'- "{line}"' for line in context.previous] or ["- (none)"]
    return "\n".join(
        [
            "Fields (not stated → null; give a value only when the latest utterance states, "
            "completes or corrects it):",
            *fields,
            "",
            "Earlier caller utterances (context only, oldest first):",
            *earlier,
            "",
            "Latest caller utterance:",
            f'"{context.latest}"',
        ]
    )
