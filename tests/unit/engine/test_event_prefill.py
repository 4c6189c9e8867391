"""Event pre-fill is typed, applies once per slot, and never beats the caller."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.slots import compile_flow, step
from pipecat_steward.core.state import SessionState
from pipecat_steward.exceptions import CoercionError
from pipecat_steward.runtime.dispatch import dispatch
from pipecat_steward.runtime.session import StewardSession

BELLA = Path(__file__).resolve().parents[3] / "bots" / "bella_notte"

FLOW = compile_flow(
    {
        "slots": [
            {
                "name": "size",
                "source": ["event", "user"],
                "event_key": "party",
                "setter": "set_size",
                "type": "integer",
                "requires_readback": True,
                "ask": "How many?",
            },
            {"name": "phone", "setter": "set_phone", "condition": "size >= 5", "ask": "Phone?"},
            {"name": "note", "source": ["event", "user"], "setter": "set_note", "ask": "Note?"},
        ]
    }
)


@pytest.mark.parametrize(("raw", "typed"), [("6", 6), (6, 6), (6.0, 6), (" 7 ", 7)])
def test_event_values_take_the_slot_type(raw: Any, typed: int) -> None:
    state = step(FLOW, SessionState(), "hi", event_data={"party": raw}).state
    assert state.record("size").value == typed
    assert state.variables["size"] == typed


def test_a_typed_event_value_meets_a_numeric_condition() -> None:
    action = step(FLOW, SessionState(), "hi", event_data={"party": "6", "note": "x"}).action
    assert "set_phone" in action.visible_tools


@pytest.mark.parametrize("raw", ["lots", "six", True, [6], 6.5])
def test_a_value_of_the_wrong_type_is_an_error_naming_the_event_key(raw: Any) -> None:
    with pytest.raises(CoercionError, match="'party'"):
        step(FLOW, SessionState(), "hi", event_data={"party": raw})


def test_a_session_refuses_bad_event_data_at_start() -> None:
    with pytest.raises(CoercionError, match="'party_size'.*integer"):
        StewardSession(load_agent(BELLA), event_data={"party_size": "a few"})


def _after(state: SessionState, tool: str, args: dict[str, Any]) -> SessionState:
    said = f"actually, {args.get('value', '')}"  # the caller's words that the call reads
    return dispatch(FLOW, state, {}, tool, args, check_visible=False, user_text=said).state


@pytest.mark.parametrize(
    ("tool", "args", "status", "value"),
    [
        ("correct_slot", {"slot": "size", "value": "3"}, "pending", 3),  # a correction wins
        ("correct_slot", {"slot": "note", "value": "mine"}, "filled", "mine"),
        ("decline_slot", {"slot": "note"}, "declined", None),
    ],
)
def test_the_caller_beats_the_pre_fill_on_every_later_step(
    tool: str, args: dict[str, Any], status: str, value: Any
) -> None:
    events = {"party": 6, "note": "from crm"}
    state = step(FLOW, SessionState(), "hi", event_data=events).state
    if tool == "decline_slot":  # a filled slot cannot be declined; the caller said so first
        state = _after(step(FLOW, SessionState(), "hi").state, tool, args)
    else:
        state = _after(state, tool, args)
    for text in ("", "hmm", "ok", ""):
        state = step(FLOW, state, text, event_data=events).state
    slot = str(args["slot"])
    assert (state.record(slot).status, state.record(slot).value) == (status, value)


def test_a_rejected_readback_of_a_corrected_value_is_asked_again_not_refilled() -> None:
    events = {"party": 6}
    state = step(FLOW, SessionState(), "hi", event_data=events).state
    state = _after(state, "correct_slot", {"slot": "size", "value": "3"})
    state = step(FLOW, state, "", event_data=events).state
    state = _after(state, "reject_pending", {})
    result = step(FLOW, state, "", event_data=events)
    assert result.state.record("size").status == "empty"
    assert "size" in result.action.asks
