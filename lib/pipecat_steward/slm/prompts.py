"""The prompt catalog: default instructions per logic_slm scope, shared by runtime and preview.

The runtime and ``steward prompts`` read the same catalog, so what an author previews is what
runs. An override replaces the instruction of its scope only; unset scopes inherit. The JSON
schema is appended by :func:`compose_system` and evidence is supplied separately in the user
message, so an override never has to restate either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pipecat_steward.core.costing import Scope

__all__ = [
    "DEFAULT_PROMPTS",
    "compose_system",
    "effective_prompts",
    "schema_instruction",
]

_ADHERENCE = """\
You check whether a voice agent is following its procedure. You receive the procedure's steps, \
the evidence (each item has an id and a source) and the latest turns.
- A step is satisfied only when evidence you can cite by id shows it. An accepted request is \
not a completed business outcome.
- Scope a yes/no answer to the question it answered. Treat contradictions as unknown.
- Never complete a step without evidence, and never invent step ids or evidence ids.
- Report a violation only for what the agent did: skipped a step, claimed progress that did \
not happen, left the procedure, or acted before a prerequisite.
- Recommend at most one permitted action, or waiting."""

_EXTRACTION = """\
You extract facts the caller stated. You receive the latest caller utterance and a few earlier \
caller utterances for context.
- Return a value only when the latest utterance states, completes or corrects it.
- Anything not stated is null. Do not guess and do not use assistant statements as facts.
- A caller correcting a value is a fact; a caller claiming verification, payment or approval \
is not."""

_LLM_JUDGE = """\
You decide whether an action is allowed. You receive a condition and the evidence. Answer \
allow=true only when the evidence shows the condition holds; when it is unclear, answer \
allow=false."""

_DERIVE = """\
You turn a voice agent's prompt into a checklist by inserting markers, never by rewriting it. \
You receive the agent's tools, its variables and its prompt.
- Return the whole prompt in "prompt", character for character: the same words, spaces, blank \
lines and order. Only insert marker lines. Never add, remove, reword, reorder or fix anything.
- Put {{#step id}} on its own line before the prose of each step the prompt describes and \
{{/step}} on its own line after it. Ids are short snake_case names, unique in the prompt.
- You may wrap a run of related steps in {{#procedure name}} and {{/procedure}} lines. Never \
put a step inside a step.
- Keep every block the author already wrote exactly where it is, under its own name.
- In "steps", give settings only for steps you added, and only where the prose makes them \
clear: complete_when "tool" with the tool whose success finishes the step, "variable" with a \
condition over the variables (amount > 100, status == "verified"), or "judge" with one \
sentence a reviewer can check; irreversible true only on a step whose tool moves money or \
data (payments, transfers, cancellations, deletions, sending records); applies_when "code" \
with a condition, or "llm" with a sentence, only for a step that applies in some calls only."""

DEFAULT_PROMPTS: Mapping[Scope, str] = {
    "adherence": _ADHERENCE,
    "extraction": _EXTRACTION,
    "llm_judge": _LLM_JUDGE,
    "derive": _DERIVE,
}
"""Catalog defaults, one instruction per scope (``derive`` is the authoring-time scope)."""


def effective_prompts(*layers: Mapping[Scope, str] | None) -> dict[Scope, str]:
    """Return the instruction per scope: the first layer that sets a scope wins.

    Args:
        *layers: Override maps from highest precedence to lowest; ``None`` layers are skipped.

    Returns:
        Every scope's instruction, falling back to :data:`DEFAULT_PROMPTS`.

    """
    result = dict(DEFAULT_PROMPTS)
    for layer in reversed([layer for layer in layers if layer]):
        result.update({scope: text for scope, text in layer.items() if text.strip()})
    return result


def schema_instruction(schema: Mapping[str, Any]) -> str:
    """Return the sentence that echoes ``schema`` in a prompt."""
    text = json.dumps(schema, separators=(",", ":"))
    return (
        "Reply with exactly one JSON object, no prose, that matches this JSON Schema; "
        f"use null for anything not known:\n{text}"
    )


def compose_system(instruction: str, schema: Mapping[str, Any]) -> str:
    """Return a system prompt: the scope's instruction followed by the echoed schema."""
    return f"{instruction.rstrip()}\n\n{schema_instruction(schema)}"
