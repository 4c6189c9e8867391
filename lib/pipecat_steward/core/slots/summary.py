"""``confirm_before``: a terminal or irreversible task is confirmed as a whole before it fires.

When such a task becomes ready, its optional inputs not yet asked are asked once (unless
``ask_optional: false``); then code reads back one summary of every input and holds the
caller-given inputs pending. The readback machinery does the rest: the strict confirmation
rule (``affirm.is_affirmation``), ``confirm_pending`` / ``reject_pending``, and setters that
correct a value through the slot rules. The task fires only when the values the caller
confirmed are exactly the values it will use; a later correction asks again.

A terminal or irreversible task that becomes ready together with other tasks waits until they
have fired: it always fires alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pipecat_steward.core.slots.compiled import CompiledFlow, CompiledTask
from pipecat_steward.core.slots.config import ConfirmBefore
from pipecat_steward.core.slots.dag import (
    Ask,
    AwaitReadback,
    Decision,
    Fire,
    is_active,
    requires_met,
)
from pipecat_steward.core.slots.invalidate import invalidate_dependents
from pipecat_steward.core.slots.merge import put
from pipecat_steward.core.slots.readback import render
from pipecat_steward.core.slots.turn import Turn
from pipecat_steward.core.state import SessionState, SlotRecord

__all__ = ["fingerprint", "fire_or_confirm", "gated", "settings", "settle", "summary_text"]

_SETTLED = ("filled", "inferred")


def settings(task: CompiledTask) -> ConfirmBefore | None:
    """The task's ``confirm_before`` as a model, or None when it has none."""
    value = task.config.confirm_before
    if value is True:
        return ConfirmBefore()
    return value or None


def gated(task: CompiledTask) -> bool:
    """A task that must fire alone: terminal or irreversible."""
    return task.config.terminal or task.config.irreversible


def fingerprint(flow: CompiledFlow, state: SessionState, task: str) -> str:
    """The values of the task's inputs as one comparable text."""
    values = {s.name: state.record(s.name).value for s in flow.task_inputs[task]}
    return json.dumps(values, sort_keys=True, default=str)


def fire_or_confirm(turn: Turn, decision: Fire) -> Decision:
    """Hold back a gated task that is not alone, and confirm a ``confirm_before`` task first.

    Returns:
        The tasks to fire now, an optional input to ask once, or the summary readback.
    """
    flow, state = turn.flow, turn.state
    tasks = _alone(flow, decision.tasks)
    for name in tasks:
        cfg = settings(flow.task[name])
        if cfg is None or state.confirmed_summaries.get(name) == fingerprint(flow, state, name):
            continue
        optional = _optional_to_ask(flow, state, name) if cfg.ask_optional else None
        if optional is not None:
            state.summary_asked.append(optional)
            turn.log("summary_optional", task=name, slot=optional)
            return Ask((optional,))
        return _open(turn, name)
    return Fire(tasks)


def _alone(flow: CompiledFlow, tasks: Sequence[str]) -> tuple[str, ...]:
    if len(tasks) < 2:
        return tuple(tasks)
    others = tuple(t for t in tasks if not gated(flow.task[t]))
    return others or (tasks[0],)


def _optional_to_ask(flow: CompiledFlow, state: SessionState, task: str) -> str | None:
    for slot in flow.task_inputs[task]:
        cfg = slot.config
        if cfg.required or not slot.is_user or slot.name in state.summary_asked:
            continue
        if state.record(slot.name).status != "empty" or not is_active(slot, state):
            continue
        if requires_met(flow, state.slots, cfg.requires):
            return slot.name
    return None


def _open(turn: Turn, task: str) -> Decision:
    flow, state = turn.flow, turn.state
    names = [
        s.name
        for s in flow.task_inputs[task]
        if s.is_user and is_active(s, state) and state.record(s.name).status in _SETTLED
    ]
    if not names:  # nothing the caller gave: nothing to confirm
        return Fire((task,))
    for name in names:
        r = state.record(name)
        put(state, name, SlotRecord("pending", r.value, r.source, r.origin, r.turn, r.spoken))
    state.summary_task, state.summary_slots = task, names
    turn.log("summary", task=task, slots=names)
    return AwaitReadback(tuple(names))


def summary_text(turn: Turn, names: Sequence[str]) -> str | None:
    """The summary question when the pending ``names`` are a summary's; else None."""
    flow, state = turn.flow, turn.state
    task = state.summary_task
    if not task or not set(names) <= set(state.summary_slots):
        return None
    cfg = settings(flow.task[task]) or ConfirmBefore()
    items = [
        s.fmt(state.record(s.name).value)
        for s in flow.task_inputs[task]
        if is_active(s, state) and state.record(s.name).status in (*_SETTLED, "pending")
    ]
    state.summary_fingerprint = fingerprint(flow, state, task)
    return render(cfg.say, {**state.variables, "summary": ", ".join(items)})


def settle(turn: Turn, _: object) -> None:
    """Close a summary once the caller answered it.

    Every input still as heard and settled: confirmed as a whole. A value changed (a setter or
    ``correct_slot``) or dropped (``reject_pending``): the summary ends, the changed values go
    through the slot rules (read back when their slot requires it, dependents invalidated as
    for any correction) and the unchanged ones are settled again; the task is summarised anew
    before it fires.
    """
    flow, state = turn.flow, turn.state
    task = state.summary_task
    if not task:
        return None
    heard = json.loads(state.summary_fingerprint or "{}")
    changed = [n for n in state.summary_slots if _value(state, n) != _text(heard.get(n))]
    pending = [n for n in state.summary_slots if state.record(n).status == "pending"]
    if not changed and pending:
        return None  # still awaiting the answer
    if not changed:
        state.confirmed_summaries[task] = fingerprint(flow, state, task)
        turn.log("summary_confirmed", task=task)
    else:
        _reopen(turn, changed, pending)
    state.summary_task, state.summary_slots, state.summary_fingerprint = "", [], ""
    return None


def _reopen(turn: Turn, changed: list[str], pending: list[str]) -> None:
    flow, state = turn.flow, turn.state
    for name in pending:
        r = state.record(name)
        readback = name in changed and flow.slot[name].config.requires_readback
        status = "pending" if readback else "filled"
        put(state, name, SlotRecord(status, r.value, r.source, r.origin, r.turn, r.spoken))
    for name in changed:
        invalidate_dependents(flow, state, name)
    turn.log("summary_reopened", task=state.summary_task, changed=changed)


def _value(state: SessionState, name: str) -> str:
    record = state.record(name)
    return _text(record.value) if record.status in (*_SETTLED, "pending") else "<dropped>"


def _text(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)
