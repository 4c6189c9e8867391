"""The one place slot records change: the merge rules and the blackboard mirror.

A proposal (from a setter, the extractor, an event or a task) never moves a filled slot back,
never overwrites a declined one, is dropped when it is an inference without a source span, and
a null value never clobbers a value. Changing a filled value is a correction, which goes through
``put`` directly after its own validation. Every write mirrors settled values into the
variables and bumps the state's revision, so conditions and change detection see it at once.
"""

from __future__ import annotations

from pipecat_steward.core.state import SessionState, SlotRecord

__all__ = ["merge_record", "put"]


def merge_record(old: SlotRecord, new: SlotRecord) -> SlotRecord:
    """Return the record that results from proposing ``new`` over ``old``. Returns ``old`` itself when the proposal is refused, so callers can test ``is old``."""
    if old.status == "declined" or old.status == "filled":
        return old
    if new.status == "inferred" and not new.source:
        return old
    if new.status in ("filled", "inferred", "pending", "deferred") and new.value is None:
        return old
    if new.status == "empty" and old.status != "empty":
        return old
    return new


def put(state: SessionState, name: str, record: SlotRecord) -> bool:
    """Write ``record`` for ``name`` on ``state`` (in place) and mirror it into the variables.

    Returns:
        True when anything changed.
    """
    old = state.slots.get(name)
    if old == record or (old is None and record.status == "empty"):
        return False
    state.slots[name] = record
    if record.settled:
        state.variables[name] = record.value
    else:
        state.variables.pop(name, None)
    state.revision += 1
    return True
