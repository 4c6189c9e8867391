"""Deriving a procedure from an author's prompt: the model's answer shape and the sidecar merge.

The model answers :data:`DERIVE_SCHEMA`: the whole prompt with markers woven in (checked by
:mod:`.weave`) and optional settings for the steps it added. Settings are a flat shape every
structured-output provider accepts; :func:`parse_proposal` turns them into sparse sidecar
entries (``procedure.steps``). :func:`sidecar_entries` keeps only entries for steps the model
added: a setting naming a step the author already has is discarded, so the author's settings
always win. :func:`derive_request` renders the user message, with the previous refusal's
reason on the retry.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError

from pipecat_steward.core.procedures.model import StepSettings

__all__ = [
    "DERIVE_SCHEMA",
    "DiscardedSetting",
    "DerivedProposal",
    "derive_request",
    "merge_sidecar",
    "parse_proposal",
    "sidecar_entries",
]

_TEXT = {"type": "string"}
DERIVE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "prompt": {
            "type": "string",
            "description": "the whole prompt, every character unchanged, with marker lines added",
        },
        "steps": {
            "type": "array",
            "description": "settings for the steps you added (may be empty)",
            "items": {
                "type": "object",
                "properties": {
                    "id": _TEXT,
                    "title": _TEXT,
                    "complete_when": {
                        "type": "object",
                        "properties": {
                            "kind": {"enum": ["tool", "variable", "judge"]},
                            "tool": _TEXT,
                            "expr": _TEXT,
                            "prompt": _TEXT,
                        },
                        "required": ["kind"],
                    },
                    "irreversible": {"type": "boolean"},
                    "applies_when": {
                        "type": "object",
                        "properties": {
                            "kind": {"enum": ["code", "llm"]},
                            "expr": _TEXT,
                            "prompt": _TEXT,
                        },
                        "required": ["kind"],
                    },
                },
                "required": ["id"],
            },
        },
    },
    "required": ["prompt", "steps"],
}
"""What the model returns: the woven prompt and settings for the steps it added."""

_FIELDS = {"tool": "tool", "variable": "expr", "judge": "prompt", "code": "expr", "llm": "prompt"}


@dataclass(frozen=True, slots=True)
class DerivedProposal:
    """The model's answer: the woven prompt and raw sidecar entries (nulls dropped)."""

    prompt: str
    settings: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class DiscardedSetting:
    """A proposed setting that was not kept, and why."""

    step: str
    reason: str


def parse_proposal(value: Mapping[str, Any]) -> DerivedProposal:
    """Read a schema-valid answer into a :class:`DerivedProposal`."""
    rows = cast(Sequence[Mapping[str, Any]], value.get("steps") or ())
    return DerivedProposal(str(value["prompt"]), tuple(_entry(row) for row in rows))


def _entry(row: Mapping[str, Any]) -> dict[str, Any]:
    """One flat row as a sparse sidecar entry: nulls and the other kinds' fields dropped."""
    out: dict[str, Any] = {"id": row.get("id")}
    if row.get("title"):
        out["title"] = row["title"]
    for key in ("complete_when", "applies_when"):
        cond = cast(Mapping[str, Any] | None, row.get(key))
        if cond:
            field = _FIELDS.get(str(cond.get("kind")), "")
            out[key] = {"kind": cond.get("kind"), field: cond.get(field)}
    if row.get("irreversible"):
        out["irreversible"] = True
    return out


def sidecar_entries(
    proposed: Sequence[Mapping[str, Any]],
    *,
    new_steps: Collection[str],
    existing: Collection[str],
) -> tuple[tuple[dict[str, Any], ...], tuple[DiscardedSetting, ...]]:
    """Keep the valid settings of steps the model added; say why each other one was dropped.

    Args:
        proposed: Raw entries from :func:`parse_proposal`.
        new_steps: Ids of the steps the woven prompt adds.
        existing: Ids the author already has (blocks and sidecar entries).
    """
    kept: dict[str, dict[str, Any]] = {}
    dropped: list[DiscardedSetting] = []
    for entry in proposed:
        step = str(entry.get("id"))
        reason = _reject(entry, step, new_steps, existing, kept)
        if reason is None:
            kept[step] = dict(entry)
        else:
            dropped.append(DiscardedSetting(step, reason))
    return tuple(kept.values()), tuple(dropped)


def _reject(
    entry: Mapping[str, Any],
    step: str,
    new_steps: Collection[str],
    existing: Collection[str],
    kept: Mapping[str, object],
) -> str | None:
    if step in existing:
        return "names a step the author already has; the author's settings stay"
    if step not in new_steps:
        return "names no step the woven prompt adds"
    if step in kept:
        return "a second entry for the same step"
    if set(entry) == {"id"}:
        return "carries no setting (the step is inferred from its body)"
    try:
        StepSettings.model_validate(entry)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"] if p not in _FIELDS)
        return f"invalid {where or 'entry'}: {first['msg']}"
    return None


def merge_sidecar(
    procedure: Mapping[str, Any] | None, entries: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """Append new entries to ``procedure.steps``; everything the author wrote stays as it was."""
    if not entries:
        return None if procedure is None else dict(procedure)
    merged = dict(procedure or {})
    steps = cast(Sequence[Any], merged.get("steps") or [])
    merged["steps"] = [*steps, *(dict(e) for e in entries)]
    return merged


def derive_request(
    prompt: str,
    *,
    tools: Sequence[str],
    variables: Sequence[tuple[str, str, str]],
    existing_steps: Sequence[str],
    existing_groups: Sequence[str],
    configured: Sequence[str] = (),
    refusal: str | None = None,
) -> str:
    """Render the user message: the agent's tools and variables, then the prompt verbatim.

    Args:
        prompt: The author's prompt, sent verbatim.
        tools: The agent's tool names.
        variables: ``(name, type, description)`` per declared variable.
        existing_steps: Step ids the author already wrote.
        existing_groups: Group names the author already wrote.
        configured: Step ids the author's ``procedure.steps`` already configures without a
            block; their blocks should use these ids (their settings stay the author's).
        refusal: Why the previous answer was refused (the retry feeds it back).
    """
    lines = [f"Tools: {', '.join(tools) or '(none)'}", "Variables:"]
    lines += [f"- {name} ({kind}): {text}".rstrip(": ") for name, kind, text in variables]
    if not variables:
        lines.append("- (none)")
    if existing_steps or existing_groups:
        lines.append(
            "Blocks the author already wrote (keep them exactly; propose no settings for them): "
            + ", ".join([*existing_steps, *(f"procedure {g}" for g in existing_groups)])
        )
    todo = [c for c in configured if c not in existing_steps]
    if todo:
        lines.append(
            "Steps the author configured without a block (use these ids for their blocks; "
            "propose no settings for them): " + ", ".join(todo)
        )
    if refusal:
        lines.append(
            f"Your previous answer was refused: {refusal}. Start again from the prompt below."
        )
    lines += ["", "The prompt is everything between the two marker lines:", "<<<PROMPT"]
    return "\n".join(lines) + "\n" + prompt + ("" if prompt.endswith("\n") else "\n") + "PROMPT>>>"
