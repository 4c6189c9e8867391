"""The session state serialises to JSON and back losslessly."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.core.slots import compile_flow
from pipecat_steward.core.state import SessionState, SlotError, SlotRecord
from pipecat_steward.exceptions import StateError
from pipecat_steward.runtime.conversation import Conversation

from .flows import BELLA
from .test_worked_examples import calls

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=8),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=8)
records = st.builds(
    SlotRecord,
    status=st.sampled_from(["empty", "pending", "deferred", "filled", "inferred", "declined"]),
    value=json_values,
    source=st.none() | st.text(max_size=10),
    origin=st.sampled_from(["user", "extraction", "event", "task", "announce", "program"]),
    turn=st.integers(0, 50),
    spoken=st.booleans(),
)
states = st.builds(
    SessionState,
    slots=st.dictionaries(st.text(min_size=1, max_size=6), records, max_size=5),
    variables=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    retries=st.dictionaries(st.text(max_size=6), st.integers(0, 9), max_size=3),
    slot_errors=st.lists(st.builds(SlotError, st.text(max_size=5), st.text(max_size=5)), max_size=2),
    status=st.sampled_from(["in_progress", "complete", "escalated"]),
    turn=st.integers(0, 99),
    steer_back_turns=st.integers(0, 9),
    promoted=st.lists(st.text(max_size=5), max_size=2),
    gate_user_text=st.text(max_size=20),
)


@given(states)
@settings(max_examples=150, deadline=None)
def test_round_trip_is_lossless(state: SessionState) -> None:
    assert SessionState.from_json(state.to_json()) == state


def _changed(value: Any, n: int) -> Any:
    """A value of ``value``'s type that differs from it, and from field ``n``'s neighbours."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + n + 1
    if isinstance(value, str):
        return f"{value}x{n}"
    if isinstance(value, list):
        return [*value, f"x{n}"]
    return {**value, f"x{n}": SlotRecord(status="filled", value=n)}


def test_copy_keeps_every_field_and_shares_no_container() -> None:
    state = SessionState()
    for n, f in enumerate(fields(SessionState)):
        setattr(state, f.name, _changed(getattr(state, f.name), n))
    copied = state.copy()
    for f in fields(SessionState):
        assert getattr(copied, f.name) == getattr(state, f.name), f.name
        if isinstance(getattr(state, f.name), list | dict):
            assert getattr(copied, f.name) is not getattr(state, f.name), f.name


def test_round_trip_mid_conversation_continues_identically() -> None:
    tools = {"find_available_times": lambda **_: {"success": True, "available_times": "18:00, 20:30"}}
    flow = compile_flow(BELLA)
    a = Conversation(flow, tools)
    a.turn("Hi")
    a.turn("4 on June 17", calls(("set_reservation_basics", {"party_size": 4, "preferred_date": "2026-06-17"})))
    b = Conversation(flow, tools, state=SessionState.from_json(a.state.to_json()))
    b.bot_spoke = True
    ra, rb = a.turn("yes"), b.turn("yes")
    assert ra.said == rb.said and a.state == b.state


@pytest.mark.parametrize("text", ["", "{}", "[1]", json.dumps({"slots": {"a": {"bogus": 1}}})])
def test_bad_json_is_a_state_error(text: str) -> None:
    with pytest.raises(StateError):
        SessionState.from_json(text)


def test_every_blackboard_write_is_a_change_event() -> None:
    from pipecat_steward.core.state import variable_changes
    from pipecat_steward.core.variables import VariableChange

    tools = {"find_available_times": lambda **_: {"success": True, "available_times": "18:00"}}
    conv = Conversation(compile_flow(BELLA), tools, event_data={"party_size": 4})
    before = conv.state
    conv.turn("Hi")
    assert variable_changes(before, conv.state) == (VariableChange("party_size", None, 4, "event"),)
    mid = conv.state
    conv.turn("June 17", calls(("set_reservation_basics", {"preferred_date": "2026-06-17"})))
    conv.turn("yes")
    changes = variable_changes(mid, conv.state)
    assert [(c.name, c.new, c.origin) for c in changes] == [
        ("preferred_date", "2026-06-17", "user"),
        ("available_times", "18:00", "task"),
    ]
