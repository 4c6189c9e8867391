"""Routing tool results into state (after each tool call) and the other ways values enter: readback confirm/reject, corrections, declines, ``fill_slots`` and proposals.

Every function takes a state and returns a ``Routed`` with a new state; the input is not
changed. Setters and validators are the agent's plain functions; they return
``{"stored": True, "value": …}`` (or ``values``/``field_errors`` for multi-slot setters, and an
optional ``inferred`` dict) or ``{"error": True, "error_code": …}``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from pipecat_steward.core.slots.compiled import CompiledFlow, CompiledSlot
from pipecat_steward.core.slots.content import supports_correction
from pipecat_steward.core.slots.dag import is_active, requires_met
from pipecat_steward.core.slots.invalidate import invalidate_dependents, invalidate_reruns
from pipecat_steward.core.slots.merge import merge_record, put
from pipecat_steward.core.state import SessionState, SlotError, SlotRecord
from pipecat_steward.core.variables import JsonValue, Origin, VariableSpec, coerce
from pipecat_steward.exceptions import CoercionError

__all__ = [
    "FillResult",
    "Routed",
    "confirm_pending",
    "correct_slot",
    "decline_slot",
    "fill_slots",
    "propose",
    "reject_pending",
    "route_executor",
    "route_setter",
]


@dataclass(frozen=True, slots=True)
class Routed:
    """The state after routing one tool result, and what to tell the model.

    Attributes:
        state: The new session state.
        ok: Whether the call did what it asked.
        reply: A JSON-safe result for the model (never a directive of what to say).
    """

    state: SessionState
    ok: bool
    reply: dict[str, JsonValue]


@dataclass(frozen=True, slots=True)
class FillResult:
    """Outcome of ``fill_slots``: which slots were written and which were skipped."""

    state: SessionState
    filled: tuple[str, ...]
    skipped: tuple[str, ...]


def route_setter(
    flow: CompiledFlow,
    state: SessionState,
    tool: str,
    result: Mapping[str, Any],
    user_text: str = "",
) -> Routed:
    """Route a setter's result: values to pending, errors to the slot-error queue."""
    new = state.copy()
    members = dict(flow.setters.get(tool, ()))
    if not members:
        return Routed(state, False, {"error": True, "error_code": "unknown_setter"})
    if result.get("error"):
        slot = next(iter(members.values()))
        new.slot_errors.append(SlotError(slot, str(result.get("error_code", "invalid"))))
        return Routed(new, False, {"error": True, "error_code": str(result.get("error_code"))})
    values, errors = _setter_values(members, result)
    for slot, code in errors.items():
        new.slot_errors.append(SlotError(slot, code))
    stored = [
        s for s, v in values.items() if v is not None and _store(flow, new, flow.slot[s], v, result)
    ]
    source = _source_text(values, user_text)
    inferred = [
        slot
        for slot, value in cast(Mapping[str, Any], result.get("inferred") or {}).items()
        if _infer(flow, new, slot, value, source=source)
    ]
    for slot in stored:
        invalidate_reruns(flow, new, slot)
    ok = bool(stored or inferred) and not errors
    reply: dict[str, JsonValue] = {"stored": bool(stored or inferred), "slots": [*stored]}
    if inferred:
        reply["inferred"] = [*inferred]
    return Routed(new, ok, reply)


def _setter_values(
    members: Mapping[str | None, str], result: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    if "values" not in result and "field_errors" not in result:
        return {next(iter(members.values())): result.get("value")}, {}
    values = cast(Mapping[str, Any], result.get("values") or {})
    errors = cast(Mapping[str, Any], result.get("field_errors") or {})
    return (
        {members[f]: v for f, v in values.items() if f in members and v is not None},
        {members[f]: str(c) for f, c in errors.items() if f in members},
    )


def _source_text(values: Mapping[str, Any], user_text: str) -> str:
    return user_text or ", ".join(str(v) for v in values.values())


def _store(
    flow: CompiledFlow,
    state: SessionState,
    slot: CompiledSlot,
    value: Any,
    result: Mapping[str, Any],
) -> bool:
    code = _check_store(flow, state, slot, value, result)
    if code:
        state.slot_errors.append(SlotError(slot.name, code))
        return False
    try:
        value = _coerced(slot, value)
    except CoercionError:
        state.slot_errors.append(SlotError(slot.name, "parse_error"))
        return False
    record = SlotRecord("pending", value, None, "user", state.turn)
    merged = merge_record(state.record(slot.name), record)
    if merged is not record:
        return False
    put(state, slot.name, record)
    state.retries.pop(f"slot:{slot.name}", None)
    return True


def _check_store(
    flow: CompiledFlow,
    state: SessionState,
    slot: CompiledSlot,
    value: Any,
    result: Mapping[str, Any],
) -> str | None:
    if not requires_met(flow, state.slots, slot.config.requires):
        return "prereq_not_met"
    rule = slot.config.validate_against
    if rule is None:
        return None
    options = str(state.record(rule.filled_slot).value or "")
    answer = result.get(rule.response_field, value)
    allowed = {o.strip().lower() for o in options.split(",") if o.strip()}
    return None if str(answer).strip().lower() in allowed else rule.error_code


def _coerced(slot: CompiledSlot, value: Any) -> JsonValue:
    if slot.config.type is None:
        return cast(JsonValue, value)
    spec = VariableSpec(name=slot.name, type=slot.config.type, values=tuple(slot.config.values))
    return coerce(spec, value)


def _infer(flow: CompiledFlow, state: SessionState, name: str, value: Any, source: str) -> bool:
    """Record an inference with its source span; True when the merge took it."""
    if name not in flow.slot or value is None:
        return False
    record = SlotRecord("inferred", cast(JsonValue, value), source, "user", state.turn)
    if merge_record(state.record(name), record) is not record:
        return False
    put(state, name, record)
    return True


def route_executor(
    flow: CompiledFlow, state: SessionState, tool: str, result: Mapping[str, Any]
) -> Routed:
    """Route an executor's result: record it, map outputs on success, queue post-processing."""
    new = state.copy()
    names = flow.executors.get(tool, ())
    task = next((flow.task[n] for n in names if n not in new.succeeded), None)
    if task is None:
        return Routed(state, False, {"error": True, "error_code": "unknown_executor"})
    cfg = task.config
    new.task_results[task.name] = {str(k): cast(JsonValue, v) for k, v in result.items()}
    ok = (not cfg.success_check or bool(result.get(cfg.success_check))) and not result.get("error")
    ok = ok and all(key in result for key in cfg.outputs)
    if ok:
        for key, slot in cfg.outputs.items():
            put(
                new,
                slot,
                SlotRecord("filled", cast(JsonValue, result[key]), None, "task", new.turn),
            )
        new.succeeded.append(task.name)
    new.just_completed.append(task.name)
    new.revision += 1
    return Routed(new, ok, {"ok": ok})


def confirm_pending(flow: CompiledFlow, state: SessionState) -> Routed:
    """Commit every pending value (the caller confirmed the readback); arm the readback transition."""
    return _settle_pending(state, "confirmed", _commit)


def reject_pending(flow: CompiledFlow, state: SessionState) -> Routed:
    """Drop every pending value so the slots are asked again (the caller rejected the readback)."""
    return _settle_pending(state, "rejected", _drop)


def _settle_pending(
    state: SessionState, outcome: str, settle: Callable[[SessionState, str], None]
) -> Routed:
    """Apply ``settle`` to every pending slot of a copy of ``state``; ``outcome`` names them.

    Confirming and rejecting share this frame: with nothing pending the call is refused, and
    either way the promotions awaiting that answer are spent.
    """
    new = state.copy()
    pending = [n for n, r in new.slots.items() if r.status == "pending"]
    if not pending:
        return Routed(state, False, {"error": True, "error_code": "nothing_pending"})
    for name in pending:
        settle(new, name)
    new.promoted = []
    return Routed(new, True, {outcome: list(pending)})


def _commit(new: SessionState, name: str) -> None:
    record = new.slots[name]
    put(new, name, SlotRecord("filled", record.value, record.source, record.origin, new.turn))
    new.readback_transition = True


def _drop(new: SessionState, name: str) -> None:
    put(new, name, SlotRecord("empty", None, None, "user", new.turn))


def correct_slot(
    flow: CompiledFlow,
    state: SessionState,
    name: str,
    result: Mapping[str, Any],
    said: str = "",
    offered: str = "",
) -> Routed:
    """Change a value after its validator accepted it, and invalidate what depended on the old value so affected tasks re-fire.

    ``said`` is the caller's words this turn and ``offered`` the bot's last words: a settled
    answer changes only when the caller's words support the correction
    (``supports_correction``); a blank turn, a filler or a bare yes to anything but the new
    value leaves it as it is, and the model is told why.
    """
    slot = flow.slot.get(name)
    if slot is None or not slot.is_user:
        return Routed(state, False, {"error": True, "error_code": "unknown_slot"})
    record = state.record(name)
    if record.status not in ("filled", "inferred", "deferred", "pending"):
        return Routed(state, False, {"error": True, "error_code": "nothing_to_correct"})
    if result.get("error"):
        new = state.copy()
        new.slot_errors.append(SlotError(name, str(result.get("error_code", "invalid"))))
        return Routed(new, False, {"error": True, "error_code": str(result.get("error_code"))})
    if result.get("value") is None:
        return Routed(state, False, {"error": True, "error_code": "missing_value"})
    if record.settled and not supports_correction(
        said, cast(JsonValue, result.get("value")), offered, [r.value for r in state.slots.values()]
    ):
        return Routed(state, False, _UNHEARD)
    return _apply_correction(flow, state, slot, result)


_UNHEARD: dict[str, JsonValue] = {
    "error": True,
    "error_code": "correction_not_heard",
    "message": "The answer was not changed: the caller's words this turn do not change it. "
    "Keep the answer; if unsure, ask the caller.",
}


def _apply_correction(
    flow: CompiledFlow, state: SessionState, slot: CompiledSlot, result: Mapping[str, Any]
) -> Routed:
    new = state.copy()
    try:
        value = _coerced(slot, result.get("value"))
    except CoercionError:
        new.slot_errors.append(SlotError(slot.name, "parse_error"))
        return Routed(new, False, {"error": True, "error_code": "parse_error"})
    status = "pending" if slot.config.requires_readback else "filled"
    put(new, slot.name, SlotRecord(status, value, None, "user", new.turn))
    cleared = invalidate_dependents(flow, new, slot.name)
    return Routed(new, True, {"corrected": slot.name, "invalidated": list(cleared)})


def decline_slot(flow: CompiledFlow, state: SessionState, name: str, source: str = "") -> Routed:
    """Mark a slot declined: terminal, never asked again."""
    slot = flow.slot.get(name)
    if slot is None or not slot.is_user:
        return Routed(state, False, {"error": True, "error_code": "unknown_slot"})
    new = state.copy()
    record = SlotRecord("declined", None, source or None, "user", new.turn)
    if merge_record(new.record(name), record) is not record:
        return Routed(state, False, {"error": True, "error_code": "already_settled"})
    put(new, name, record)
    return Routed(new, True, {"declined": name})


def fill_slots(
    flow: CompiledFlow,
    state: SessionState,
    values: Mapping[str, Any],
    skip_readback: bool = True,
    origin: Origin = "program",
) -> FillResult:
    """Fill slots programmatically: unknown, filled or inactive slots are skipped."""
    new = state.copy()
    filled: list[str] = []
    skipped: list[str] = []
    status = "filled" if skip_readback else "pending"
    for name, value in values.items():
        slot = flow.slot.get(name)
        if slot is None or new.record(name).settled or value is None or not is_active(slot, new):
            skipped.append(name)
            continue
        record = SlotRecord(status, cast(JsonValue, value), None, origin, new.turn)
        if merge_record(new.record(name), record) is not record:
            skipped.append(name)
            continue
        put(new, name, record)
        filled.append(name)
    return FillResult(new, tuple(filled), tuple(skipped))


def propose(
    flow: CompiledFlow, state: SessionState, proposals: Iterable[tuple[str, SlotRecord]]
) -> FillResult:
    """Merge model proposals (from extraction) under the merge rules."""
    new = state.copy()
    taken: list[str] = []
    refused: list[str] = []
    for name, record in proposals:
        if name not in flow.slot or merge_record(new.record(name), record) is not record:
            refused.append(name)
            continue
        put(new, name, record)
        taken.append(name)
    return FillResult(new, tuple(taken), tuple(refused))
