"""What a correction invalidates: task results that consumed the old value, the slots those tasks filled, and slots whose ``requires`` chain passes through any of them.

A declined slot is never invalidated: the caller refused it, and that stands whatever it
required.
"""

from __future__ import annotations

from collections.abc import Iterable

from pipecat_steward.core.slots.compiled import CompiledFlow
from pipecat_steward.core.slots.merge import put
from pipecat_steward.core.state import SessionState, SlotRecord

__all__ = ["invalidate_dependents", "invalidate_reruns"]


def invalidate_dependents(flow: CompiledFlow, state: SessionState, name: str) -> tuple[str, ...]:
    """Clear everything derived from slot ``name`` on ``state`` (in place).

    Returns:
        The slots that were cleared, in declaration order.
    """
    changed = {name}
    cleared: set[str] = set()
    grew = True
    while grew:
        grew = False
        for task in flow.tasks:
            cfg = task.config
            if task.name in state.task_results and changed & {*cfg.inputs, *cfg.requires}:
                _drop_task(state, task.name)
                grew |= _add(changed, cleared, cfg.outputs.values())
        for slot in flow.slots:
            if slot.name in changed or not changed & set(slot.config.requires):
                continue
            if state.record(slot.name).status == "declined":
                continue  # a decline is terminal: the caller refused, whatever it required
            grew |= _add(changed, cleared, [slot.name])
    for slot in cleared:
        put(state, slot, SlotRecord("empty", None, None, "program", state.turn))
    return tuple(s.name for s in flow.slots if s.name in cleared)


def invalidate_reruns(flow: CompiledFlow, state: SessionState, name: str) -> tuple[str, ...]:
    """Drop the results of ``rerun_on_new_input`` tasks that ran without slot ``name`` (in place).

    What those results filled is cleared as a correction would clear it; tasks without the
    option keep their results, since they never consumed a value of ``name``.

    Returns:
        The slots that were cleared, in declaration order.
    """
    cleared: set[str] = set()
    for task in flow.tasks:
        cfg = task.config
        if cfg.rerun_on_new_input and name in cfg.inputs and task.name in state.task_results:
            _drop_task(state, task.name)
            for output in cfg.outputs.values():
                cleared.add(output)
                cleared.update(invalidate_dependents(flow, state, output))
    for slot in cleared:
        put(state, slot, SlotRecord("empty", None, None, "program", state.turn))
    return tuple(s.name for s in flow.slots if s.name in cleared)


def _drop_task(state: SessionState, task: str) -> None:
    # The failure count stays: only a success resets it, so a caller who keeps changing an
    # input still reaches the task's exhaust path after its bound.
    state.task_results.pop(task, None)
    if task in state.succeeded:
        state.succeeded.remove(task)


def _add(changed: set[str], cleared: set[str], names: Iterable[str]) -> bool:
    new = [n for n in names if n not in changed]
    changed.update(new)
    cleared.update(new)
    return bool(new)
