"""``decide``: the pure DAG decision, what the engine does next.

A strict priority cascade over the current state: ready tasks fire first, then pending values
are read back, then the first eligible announce or user slot is asked. The function never
changes the state; the same state always gives the same decision (idempotency).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipecat_steward.core.slots.compiled import CompiledFlow, CompiledSlot, CompiledTask
from pipecat_steward.core.state import EMPTY, SETTLED, SessionState, SlotRecord

__all__ = [
    "AllDone",
    "Announce",
    "Ask",
    "AwaitReadback",
    "Decision",
    "Fire",
    "decide",
    "has_status",
    "is_active",
    "is_complete",
    "is_usable",
    "task_active",
]


@dataclass(frozen=True, slots=True)
class Fire:
    """Every ready task fires now; ready tasks are independent of each other by construction."""

    tasks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AwaitReadback:
    """Pending values must be confirmed or rejected before anything else."""

    slots: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask for one slot, or two the config groups together."""

    slots: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Announce:
    """Deliver an announce slot's message and mark it done."""

    slot: str


@dataclass(frozen=True, slots=True)
class AllDone:
    """Nothing left to fire, confirm or ask."""


Decision = Fire | AwaitReadback | Ask | Announce | AllDone


def is_active(slot: CompiledSlot, state: SessionState) -> bool:
    """True unless the slot's condition evaluates false over the variables."""
    return slot.condition is None or slot.condition.truthy(state.variables)


def task_active(task: CompiledTask, state: SessionState) -> bool:
    """True unless the task's condition evaluates false."""
    return task.condition is None or task.condition.truthy(state.variables)


def has_status(state: SessionState, status: str) -> bool:
    """True when any slot record has ``status`` (a loop: cheaper than ``any`` over a generator)."""
    for record in state.slots.values():  # noqa: SIM110 - any() over a generator is slower
        if record.status == status:
            return True
    return False


def is_usable(record: SlotRecord, turn: int) -> bool:
    """A value a task may consume: filled, or inferred, said aloud and not objected to.

    An inference becomes usable once the bot has stated it and the caller has had a turn to
    correct it: inferred values are confirmed aloud, not silently accepted.
    """
    if record.status == "filled":
        return True
    return record.status == "inferred" and record.spoken and record.turn < turn


def decide(flow: CompiledFlow, state: SessionState) -> Decision:
    """Return the next action for ``state``. Pure: the state is not changed."""
    # List comprehensions (inlined since Python 3.12) rather than generators: decide is hot.
    ready = [t.name for t in flow.tasks if _ready(flow, t, state)]
    if ready:
        return Fire(tuple(ready))
    pending = [n for n, r in state.slots.items() if r.status == "pending"]
    if pending:
        return AwaitReadback(tuple(pending))
    return _next_slot_action(flow, state)


def _ready(flow: CompiledFlow, task: CompiledTask, state: SessionState) -> bool:
    if task.name in state.succeeded:
        return False
    variables = state.variables
    if task.condition is not None and not task.condition.truthy(variables):
        return False
    slots, turn = state.slots, state.turn
    for slot in flow.task_inputs[task.name]:
        # _input_ready, inlined: inactive, usable, or an optional input with nothing coming.
        record = slots.get(slot.config.name, EMPTY)
        status = record.status
        if status == "filled" or (status == "inferred" and record.spoken and record.turn < turn):
            continue
        if not slot.config.required and status in ("empty", "declined"):
            continue
        if slot.condition is None or slot.condition.truthy(variables):
            return False
    for slot in flow.task_requires[task.name]:
        record = slots.get(slot.config.name, EMPTY)
        if record.status == "declined" and not slot.config.required:
            continue
        if (slot.condition is None or slot.condition.truthy(variables)) and not is_usable(
            record, turn
        ):
            return False
    return True


def _askable(flow: CompiledFlow, slot: CompiledSlot, state: SessionState) -> bool:
    slots = state.slots
    if slots.get(slot.config.name, EMPTY).status != "empty" or not is_active(slot, state):
        return False
    if not (slot.is_user or slot.is_announce):
        return False
    return requires_met(flow, slots, slot.config.requires)


def requires_met(
    flow: CompiledFlow, slots: Mapping[str, SlotRecord], requires: Sequence[str]
) -> bool:
    """Every required slot is settled, or is an optional slot the caller declined."""
    for name in requires:
        status = slots.get(name, EMPTY).status
        if status not in SETTLED and not (status == "declined" and name in flow.optional):
            return False
    return True


def _next_slot_action(flow: CompiledFlow, state: SessionState) -> Decision:
    # Required slots are asked before optional ones: an optional slot never blocks.
    slots, variables = state.slots, state.variables
    for slot in flow.ask_order:
        cfg = slot.config
        if slots.get(cfg.name, EMPTY).status != "empty":
            continue
        if slot.condition is not None and not slot.condition.truthy(variables):
            continue
        if not (slot.is_user or slot.is_announce):
            continue
        if cfg.requires and not requires_met(flow, slots, cfg.requires):
            continue
        if slot.is_announce:
            return Announce(cfg.name)
        partner = flow.partner.get(cfg.name)
        if partner and _askable(flow, flow.slot[partner], state) and flow.slot[partner].is_user:
            return Ask((cfg.name, partner))
        return Ask((cfg.name,))
    return AllDone()


def is_complete(flow: CompiledFlow, state: SessionState) -> bool:
    """Completion: every required active slot is filled, declined or inferred with a source, and nothing awaits confirmation."""
    for slot in flow.slots:
        record = state.record(slot.name)
        if record.status in ("pending", "deferred"):
            return False
        if not slot.config.required or not is_active(slot, state):
            continue
        if record.status in ("filled", "declined"):
            continue
        if record.status == "inferred" and record.source:
            continue
        return False
    return True
