"""Write extraction results through the blackboard's merge rules (a settled value is never lost).

- ``null`` never clobbers: a null field is simply not a proposal;
- a linked or sensitive variable refuses the write, and a value that does not coerce to the
  variable's type is refused;
- a variable backed by a slot becomes a slot proposal through ``core.slots.propose``: ``filled``
  when the caller's words state it (its source span is the utterance that says it), ``inferred``
  when it was derived (its source is the latest utterance; the slot engine confirms it aloud);
  the slot merge then decides (a filled or declined slot is never overwritten);
- any other variable is written when its value changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pipecat_steward.core.extraction.context import ExtractionContext
from pipecat_steward.core.number_words import clock_said, spoken_numbers
from pipecat_steward.core.sameness import same_value
from pipecat_steward.core.slots import CompiledFlow, propose
from pipecat_steward.core.slots.affirm import AFFIRMING, is_affirmation
from pipecat_steward.core.state import SessionState, SlotRecord
from pipecat_steward.core.variables import JsonValue, VariableSpec, coerce
from pipecat_steward.core.words import word_list, word_set
from pipecat_steward.exceptions import CoercionError

__all__ = ["ExtractionMerge", "Proposal", "merge_extraction", "source_span"]

_SPAN_LIMIT = 200
# A yes is the confirmation classifier's vocabulary; a no is a negation ("I don't").
_YES_NO = AFFIRMING | word_set(
    "no nope nah not never don't dont doesn't isn't wasn't won't can't agree agreed please"
)
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_MONTHS = word_list(
    "january february march april may june july august september october november december"
)
# Letters of any script (a name said in Cyrillic is said), apart from the digits between them.
_TOKEN = re.compile(r"[^\W\d_]+|\d+")


@dataclass(frozen=True, slots=True)
class Proposal:
    """One slot proposal the extraction made (for the trace)."""

    name: str
    value: JsonValue
    status: Literal["filled", "inferred"]
    source: str
    taken: bool


@dataclass(frozen=True, slots=True)
class ExtractionMerge:
    """The merged state and what happened to each non-null field.

    Attributes:
        state: The new session state.
        written: Plain variables written.
        proposals: Slot proposals, each marked taken or not by the slot merge.
        refused: ``(name, why)`` for fields refused before merging.
    """

    state: SessionState
    written: tuple[str, ...] = ()
    proposals: tuple[Proposal, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()


def _tokens(text: str) -> list[str]:
    """Words and numbers, and the numbers said in words ("for four": 4, "nineteen ninety": 1990)."""
    words = _TOKEN.findall(text.lower())
    tokens = [t.lstrip("0") or "0" if t.isdigit() else t for t in words]
    return [*tokens, *spoken_numbers(words)]


def _needed(spec: VariableSpec, value: JsonValue) -> list[str]:
    if spec.type == "date" and isinstance(value, str):
        year, month, day = value.split("-")
        return [year, str(int(day)), f"{int(month)}|{_MONTHS[int(month) - 1]}"]
    clock = clock_said(value) if spec.type == "time" and isinstance(value, str) else None
    if clock is not None:  # "17:00" is said "5 pm"
        hours, minutes = clock
        return [hours, minutes] if minutes else [hours]
    return _tokens(str(value))


def source_span(spec: VariableSpec, value: JsonValue, context: ExtractionContext) -> str | None:
    """The caller's words that state ``value`` (None when it was derived, not stated).

    Every token of the value must appear in the context (a date by its year, day and month
    number or name, possibly across utterances); a yes/no answer states a boolean.
    """
    lines = context.lines
    if spec.type == "boolean":
        said = [line for line in lines[-1:] if _says_yes_or_no(line)]
        return said[0][:_SPAN_LIMIT] if said else None
    needed = _needed(spec, value)
    used = [line for line in lines if any(_has(_tokens(line), n) for n in needed)]
    pooled = [t for line in used for t in _tokens(line)]
    if not needed or not all(_has(pooled, n) for n in needed):
        return None
    return " … ".join(used)[:_SPAN_LIMIT]


def _says_yes_or_no(line: str) -> bool:
    words = set(_WORD.findall(line.lower().replace("\u2019", "'")))
    return bool(_YES_NO & words) or is_affirmation(line)


def _has(tokens: Sequence[str], needed: str) -> bool:
    return any(alt in tokens for alt in needed.split("|"))


def _checked(spec: VariableSpec | None, raw: object) -> tuple[JsonValue, str | None]:
    if spec is None:
        return None, "not eligible"
    if spec.linked or spec.sensitive:
        return None, "linked" if spec.linked else "sensitive"
    try:
        return coerce(spec, raw), None
    except CoercionError:
        return None, f"not a {spec.type}"


def merge_extraction(
    specs: Sequence[VariableSpec],
    flow: CompiledFlow,
    state: SessionState,
    values: Mapping[str, object],
    context: ExtractionContext,
) -> ExtractionMerge:
    """Merge one extraction result into ``state`` (see the module docstring)."""
    by_name = {s.name: s for s in specs}
    refused: list[tuple[str, str]] = []
    slots: list[tuple[str, SlotRecord]] = []
    plain: dict[str, JsonValue] = {}
    for name, raw in values.items():
        if raw is None:
            continue  # null never clobbers
        value, why = _checked(by_name.get(name), raw)
        if why is not None or value is None:
            refused.append((name, why or "null after coercion"))
        elif name in flow.slot:
            slots.append((name, _record(by_name[name], value, context, state.turn)))
        elif not same_value(state.variables.get(name), value):
            plain[name] = value
    return _apply(flow, state, slots, plain, tuple(refused))


def _record(
    spec: VariableSpec, value: JsonValue, context: ExtractionContext, turn: int
) -> SlotRecord:
    span = source_span(spec, value, context)
    if span is not None:
        return SlotRecord("filled", value, span, "extraction", turn)
    return SlotRecord("inferred", value, context.latest[:_SPAN_LIMIT] or None, "extraction", turn)


def _apply(
    flow: CompiledFlow,
    state: SessionState,
    slots: list[tuple[str, SlotRecord]],
    plain: dict[str, JsonValue],
    refused: tuple[tuple[str, str], ...],
) -> ExtractionMerge:
    result = propose(flow, state, slots) if slots else None
    new = result.state if result else state.copy()
    new.variables.update(plain)
    taken = set(result.filled) if result else set[str]()
    proposals = tuple(
        Proposal(
            n, r.value, "filled" if r.status == "filled" else "inferred", r.source or "", n in taken
        )
        for n, r in slots
    )
    return ExtractionMerge(new, tuple(plain), proposals, refused)
