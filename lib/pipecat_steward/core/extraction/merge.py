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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pipecat_steward.core.extraction.context import ExtractionContext
from pipecat_steward.core.extraction.stated import SPAN_LIMIT, source_span
from pipecat_steward.core.sameness import same_value
from pipecat_steward.core.slots import CompiledFlow, propose
from pipecat_steward.core.state import SessionState, SlotRecord
from pipecat_steward.core.variables import JsonValue, VariableSpec, coerce
from pipecat_steward.exceptions import CoercionError

__all__ = ["ExtractionMerge", "Proposal", "merge_extraction"]


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
    return SlotRecord("inferred", value, context.latest[:SPAN_LIMIT] or None, "extraction", turn)


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
